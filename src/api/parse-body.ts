/**
 * Reading request bodies at the boundary: the body's size in entries (core/json-bounds.ts), then
 * JSON, then a zod schema; failures are 400 naming the field. The bound is checked before
 * anything is parsed, so the synchronous work of one request (JSON.parse, the schema walk) stays
 * within a few milliseconds whatever its body holds, and other requests (health, reports) are
 * not held up behind it.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { formatIssues } from '../admission/job-spec-file.js';
import { jsonBoundsProblem, type JsonBounds } from '../core/json-bounds.js';
import type { ApiEnv } from './auth.js';
import { badRequest } from './http-error.js';

/**
 * Entries a request body may hold, well above any valid one: a job spec has at most 256 env
 * variables and 4096 arguments (SPEC_LIMITS), a report body at most 1000 measurements of a few
 * dozen fields each. Documented in docs/control-plane.md ("Limits").
 */
export const BODY_BOUNDS: JsonBounds = { depth: 16, keys: 1024, items: 10_000, total: 200_000 };

/** The body as JSON (400 E_BAD_REQUEST when it is not, or when it holds more entries than BODY_BOUNDS). */
export async function jsonBody(c: Context<ApiEnv>, what = 'body'): Promise<unknown> {
  let text: string;
  try {
    text = await c.req.text();
  } catch {
    throw badRequest('the request body could not be read');
  }
  const problem = jsonBoundsProblem(text, BODY_BOUNDS);
  if (problem !== undefined)
    throw badRequest(
      `${what} is invalid: ${problem} (refused before parsing; the limits are in docs/control-plane.md)`,
    );
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('body must be JSON');
  }
}

/** `value` parsed by `schema`; 400 naming every bad field otherwise. */
export function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(`${what} is invalid: ${formatIssues(result.error, schema)}`);
  return result.data;
}

/** The JSON body parsed by `schema`. */
export async function parseBody<T extends z.ZodType>(c: Context<ApiEnv>, schema: T, what: string): Promise<z.infer<T>> {
  return parse(schema, await jsonBody(c, what), what);
}
