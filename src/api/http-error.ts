/** Mapping of domain error codes to HTTP statuses, in one place. */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { GoodputError, type ErrorCode } from '../core/errors.js';

const STATUS: Partial<Record<ErrorCode, ContentfulStatusCode>> = {
  E_UNAUTHORIZED: 401,
  E_FORBIDDEN: 403,
  E_NOT_FOUND: 404,
  E_CONFLICT: 409,
  E_JOB_LIMIT: 429,
  E_AMBIGUOUS: 409,
  E_NO_SCRIPT: 400,
  E_INFEASIBLE: 422,
  E_TOO_LARGE: 413,
  E_STORE_DAMAGED: 503,
  E_STORE_UNAVAILABLE: 503,
  E_DISK_FULL: 507,
  E_BUSY: 503,
  E_SPEC: 400,
  E_INPUT: 400,
  E_BAD_REQUEST: 400,
  E_USAGE: 400,
};

/** HTTP status of a domain error code (500 for unknown codes). */
export function statusOf(code: ErrorCode): ContentfulStatusCode {
  return STATUS[code] ?? 500;
}

/** The body every error response has: `{"error": {"code", "message"}}`. */
export function errorBody(error: unknown): { error: { code: ErrorCode; message: string } } {
  if (error instanceof GoodputError) return { error: { code: error.code, message: error.message } };
  return { error: { code: 'E_INTERNAL', message: error instanceof Error ? error.message : String(error) } };
}

export const unauthorized = (message = 'missing or invalid bearer token') =>
  new GoodputError('E_UNAUTHORIZED', message);
export const forbidden = (message: string) => new GoodputError('E_FORBIDDEN', message);
export const badRequest = (message: string) => new GoodputError('E_BAD_REQUEST', message);
