/** Bearer-token authentication: who is calling (admin, a user, or a job). */
import type { MiddlewareHandler } from 'hono';
import type { Store } from '../store/store.js';
import { hashToken, jobTokenClaim, verifyJobToken } from '../control/tokens.js';
import { forbidden, unauthorized } from './http-error.js';
import { GoodputError } from '../core/errors.js';
import { isTerminal } from '../store/lifecycle.js';

/** The authenticated caller. A job principal may only report for its own job. */
export type Principal =
  { kind: 'user'; user: string; admin: boolean; expires_at_ms?: number } | { kind: 'job'; job_id: string };

/** Hono environment of the API: the principal set by `authenticate`. */
export interface ApiEnv {
  Variables: { principal: Principal };
}

/**
 * Middleware factory: resolves the bearer token to a principal or answers 401. A user token is
 * refused once expired or revoked; a job token (checked by HMAC) once its job has ended (its
 * report endpoint then answers 409).
 */
export function authenticate(store: Store, secret: string, now_ms: () => number = Date.now): MiddlewareHandler<ApiEnv> {
  return async function authenticateBearer(c, next) {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthorized();
    const token = match[1]!;
    const claim = jobTokenClaim(token);
    if (claim !== undefined) {
      if (!verifyJobToken(secret, claim, token)) throw unauthorized();
      const state = await store.getJobState(claim);
      if (state !== undefined && isTerminal(state)) {
        // A replica still reporting after its job ended learns why (409, nothing stored); the
        // token opens nothing else any more.
        if (c.req.method === 'POST' && c.req.path === `/v1/jobs/${claim}/reports`)
          throw new GoodputError('E_CONFLICT', `job ${claim} is ${state}; its reports are no longer accepted`);
        throw unauthorized(`job ${claim} has ended (${state}); its token is no longer valid`);
      }
      c.set('principal', { kind: 'job', job_id: claim });
    } else {
      const found = await store.findToken(hashToken(token));
      if (!found) throw unauthorized();
      if (found.revoked_at_ms !== undefined)
        throw unauthorized('this token was revoked; ask for a new one (goodput token create)');
      if (found.expires_at_ms !== undefined && now_ms() >= found.expires_at_ms)
        throw unauthorized('this token has expired; ask for a new one (goodput token create)');
      c.set('principal', {
        kind: 'user',
        user: found.user,
        admin: found.admin,
        ...(found.expires_at_ms !== undefined ? { expires_at_ms: found.expires_at_ms } : {}),
      });
    }
    await next();
  };
}

/** The calling user; a job token is refused (403) outside the report endpoint. */
export function requireUser(principal: Principal): { user: string; admin: boolean; expires_at_ms?: number } {
  if (principal.kind !== 'user') throw forbidden('a job token may only post reports for its own job');
  return principal;
}

/** Whether `principal` may see and change a job owned by `owner`. */
export function mayAccess(principal: Principal, owner: string, job_id: string): boolean {
  if (principal.kind === 'job') return principal.job_id === job_id;
  return principal.admin || principal.user === owner;
}

/** Whether `authorization` carries a valid (not revoked, not expired) admin token. */
export async function isAdminBearer(
  store: Store,
  authorization: string | undefined,
  now_ms: () => number = Date.now,
): Promise<boolean> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (!match || jobTokenClaim(match[1]!) !== undefined) return false;
  const found = await store.findToken(hashToken(match[1]!));
  return (
    found !== undefined &&
    found.admin &&
    found.revoked_at_ms === undefined &&
    (found.expires_at_ms === undefined || now_ms() < found.expires_at_ms)
  );
}
