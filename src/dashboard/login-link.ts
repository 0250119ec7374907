/**
 * Login links (`goodput dashboard`): a browser opened on `DASHBOARD/#login=CODE` lands logged in.
 * The code is short-lived and single-use, and travels only in the URL fragment, which a browser
 * never sends to a server (so no access log, proxy or Referer sees it); the page trades it, in a
 * POST header, for the token of the user who asked for the link, and removes it from the address
 * bar and history before anything else. Codes live in this process only: a restarted server
 * forgets them, which costs a new `goodput dashboard`.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { requireUser, type ApiEnv } from '../api/auth.js';
import { unauthorized } from '../api/http-error.js';

/** How long a login link works (s): long enough to open it, short enough that a copy found later is dead. */
export const LOGIN_LINK_TTL_S = 120;

/** The fragment that carries a code: `#login=CODE`. */
export const LOGIN_FRAGMENT = 'login=';

/** Answer of `POST /dash/login-link`. */
export interface LoginLinkResponse {
  code: string;
  expires_in_s: number;
}

const hashOf = (code: string): string => createHash('sha256').update(code).digest('hex');

/**
 * Issued codes by hash (the codes themselves are not kept), each with the token it stands for
 * and its expiry. Bounded: expired codes are dropped at every issue.
 */
export class LoginLinks {
  private readonly codes = new Map<string, { token: string; expires_at_ms: number }>();

  constructor(
    private readonly now_ms: () => number = Date.now,
    private readonly ttl_s = LOGIN_LINK_TTL_S,
  ) {}

  /** A new code standing for `token` for `ttl_s`. */
  issue(token: string): LoginLinkResponse {
    const now = this.now_ms();
    for (const [hash, entry] of this.codes) if (entry.expires_at_ms <= now) this.codes.delete(hash);
    const code = randomBytes(32).toString('base64url');
    this.codes.set(hashOf(code), { token, expires_at_ms: now + this.ttl_s * 1000 });
    return { code, expires_in_s: this.ttl_s };
  }

  /** The token `code` stands for, once: a second use, an unknown or an expired code gives undefined. */
  redeem(code: string): string | undefined {
    const hash = hashOf(code);
    const entry = this.codes.get(hash);
    this.codes.delete(hash);
    if (entry === undefined || entry.expires_at_ms <= this.now_ms()) return undefined;
    return entry.token;
  }
}

/**
 * `POST /dash/login` (header `authorization: Login CODE`, no bearer: the code is the credential,
 * once) answers `{ token }`. Registered before the dashboard's authentication.
 */
export function registerLoginExchange(app: Hono<ApiEnv>, links: LoginLinks): void {
  app.post('/dash/login', (c) => {
    const match = /^Login\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
    const token = match ? links.redeem(match[1]!) : undefined;
    if (token === undefined)
      throw unauthorized(
        `this login link has expired (it works for ${LOGIN_LINK_TTL_S} s) or was already used; run 'goodput dashboard' for a new one`,
      );
    return c.json({ token });
  });
}

/**
 * `POST /dash/login-link` (a user's or admin's bearer token; not a job's) answers a code that
 * stands for that same token. Registered after the dashboard's authentication.
 */
export function registerLoginLinkIssue(app: Hono<ApiEnv>, links: LoginLinks): void {
  app.post('/dash/login-link', (c) => {
    requireUser(c.get('principal'));
    const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')![1]!;
    return c.json<LoginLinkResponse>(links.issue(token), 201);
  });
}
