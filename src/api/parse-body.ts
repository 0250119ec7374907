/** Reading request bodies at the boundary: JSON, then a zod schema; failures are 400 naming the field. */
import type { Context } from 'hono';
import type { z } from 'zod';
import { formatIssues } from '../admission/job-spec-file.js';
import type { ApiEnv } from './auth.js';
import { badRequest } from './http-error.js';

/** The body as JSON (400 E_BAD_REQUEST when it is not). */
export async function jsonBody(c: Context<ApiEnv>): Promise<unknown> {
  try {
    return await c.req.json();
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
  return parse(schema, await jsonBody(c), what);
}
