/**
 * Request body limit on the bytes actually read, for every transfer encoding. A body announced by
 * Content-Length (without Transfer-Encoding) is checked by its header alone, so the hot report
 * path never builds a web stream; any other body (chunked, or a stream in process) is counted
 * while it is read by hono's bodyLimit, which stops reading at the limit. The unread rest of a
 * refused body is drained or the connection closed by @hono/node-server, never buffered.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { GoodputError } from '../core/errors.js';
import type { ApiEnv } from './auth.js';

/** The error a too large body gets (413). */
function tooLarge(max_bytes: number): GoodputError {
  return new GoodputError(
    'E_TOO_LARGE',
    `request body larger than ${max_bytes} bytes; see the limits in docs/control-plane.md`,
  );
}

/** Bodies up to this size are not counted against the in-flight budget (reports, small specs). */
const SMALL_BODY_BYTES = 64 << 10;

/**
 * Middleware factory: refuses (413 E_TOO_LARGE) a request whose body exceeds `max_bytes`, and
 * (503 E_BUSY, Retry-After 1) a large body while large bodies in flight already hold
 * `in_flight_bytes`: memory for request bodies stays bounded whatever the number of clients.
 */
export function limitBody(max_bytes: number, in_flight_bytes = 8 * max_bytes): MiddlewareHandler<ApiEnv> {
  const counted = bodyLimit({
    maxSize: max_bytes,
    onError: () => {
      throw tooLarge(max_bytes);
    },
  });
  let held = 0;
  return async function limitBodyBytes(c, next) {
    const length = c.req.header('content-length');
    const sized = length !== undefined && c.req.header('transfer-encoding') === undefined;
    if (sized && Number(length) > max_bytes) {
      // The connection is closed after the answer: the unread body is not drained (read and
      // dropped) by the server, which for clients that keep posting would keep it busy.
      c.header('connection', 'close');
      throw tooLarge(max_bytes);
    }
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    // A body of unknown size may grow to the limit: it holds the limit.
    const size = sized ? Number(length) : max_bytes;
    if (size <= SMALL_BODY_BYTES) return sized ? next() : counted(c, next);
    if (held + size > in_flight_bytes) {
      c.header('retry-after', '1');
      throw new GoodputError(
        'E_BUSY',
        `too many large request bodies in flight (${in_flight_bytes} bytes); retry in a second`,
      );
    }
    held += size;
    try {
      return await (sized ? next() : counted(c, next));
    } finally {
      held -= size;
    }
  };
}
