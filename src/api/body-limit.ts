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
  return new GoodputError('E_TOO_LARGE', `request body larger than ${max_bytes} bytes; see the limits in docs/control-plane.md`);
}

/** Middleware factory: refuses (413 E_TOO_LARGE) a request whose body exceeds `max_bytes`. */
export function limitBody(max_bytes: number): MiddlewareHandler<ApiEnv> {
  const counted = bodyLimit({ maxSize: max_bytes, onError: () => { throw tooLarge(max_bytes); } });
  return async function limitBodyBytes(c, next) {
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined) {
      if (Number(length) > max_bytes) throw tooLarge(max_bytes);
      return next();
    }
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    return counted(c, next);
  };
}
