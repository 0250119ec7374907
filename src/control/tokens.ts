/**
 * Bearer tokens. Admin and user tokens are random and stored hashed; job tokens are derived
 * (HMAC of the job id with the server secret), so a relaunch after a server restart gets the
 * same token without the store ever holding it.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** sha256 hex of a token, the form the store keeps. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A new random token with a kind prefix (`gpa_` admin, `gpu_` user). */
export function newToken(prefix: 'gpa' | 'gpu'): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

/** A new server secret (hex). */
export function newSecret(): string {
  return randomBytes(32).toString('hex');
}

/** The token of one job: valid only for that job's report endpoint. Deterministic. */
export function jobToken(secret: string, job_id: string): string {
  const mac = createHmac('sha256', secret).update(`job:${job_id}`).digest('base64url');
  return `gpj_${job_id}.${mac}`;
}

/** The job id a well-formed job token claims, or undefined (the claim is not yet verified). */
export function jobTokenClaim(token: string): string | undefined {
  if (!token.startsWith('gpj_')) return undefined;
  const dot = token.lastIndexOf('.');
  return dot > 4 ? token.slice(4, dot) : undefined;
}

/** Whether `token` is the job token of `job_id`. Constant-time comparison. */
export function verifyJobToken(secret: string, job_id: string, token: string): boolean {
  const expected = Buffer.from(jobToken(secret, job_id));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
