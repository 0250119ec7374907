/**
 * Token lifecycle under /v1/tokens: create (a user for themself, an admin for anyone, with an
 * optional expiry and, admin only, the user's Unix and Slurm accounts), list (own; admin: all) and revoke.
 * A token is shown once, at creation; afterwards only its id (first 12 hex of its hash).
 */
import type { Hono } from 'hono';
import { hashToken, newToken } from '../control/tokens.js';
import { GoodputError } from '../core/errors.js';
import { lookupAccount } from '../multiuser/accounts.js';
import type { Store } from '../store/store.js';
import type { TokenRecord } from '../store/types.js';
import { requireUser, type ApiEnv } from './auth.js';
import { forbidden } from './http-error.js';
import { parseBody } from './parse-body.js';
import { tokenBodySchema } from '../core/wire.js';

import type { TokenView } from './views.js';

export type { TokenView };

/** Characters of a token's hash that name it. */
const ID_CHARS = 12;

function tokenView(t: TokenRecord): TokenView {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    id: t.hash.slice(0, ID_CHARS),
    user: t.user,
    admin: t.admin,
    created_at: new Date(t.created_at_ms).toISOString(),
    expires_at: iso(t.expires_at_ms),
    revoked_at: iso(t.revoked_at_ms),
  };
}

/** Registers the token routes on `app` (behind authentication). */
export function registerTokenRoutes(app: Hono<ApiEnv>, store: Store, now_ms: () => number = Date.now): void {
  app.post('/v1/tokens', async (c) => {
    const principal = requireUser(c.get('principal'));
    const body = await parseBody(c, tokenBodySchema, 'token request');
    const user = body.user ?? principal.user;
    if (!principal.admin && user !== principal.user) throw forbidden('only an admin may create tokens for other users');
    if (!principal.admin && body.unix_user !== undefined)
      throw forbidden("only an admin may set a user's Unix account");
    if (body.unix_user !== undefined) {
      const account = lookupAccount(body.unix_user);
      if (!account)
        throw new GoodputError('E_BAD_REQUEST', `unix_user: no Unix account '${body.unix_user}' on the server`);
      if (account.uid === 0) throw new GoodputError('E_BAD_REQUEST', 'unix_user: jobs never run as root (uid 0)');
      await store.setUnixUser(user, body.unix_user);
    }
    if (body.slurm_account !== undefined) {
      if (!principal.admin) throw forbidden("only an admin may set a user's Slurm account");
      if (!(await store.setSlurmAccount(user, body.slurm_account)))
        throw new GoodputError(
          'E_BAD_REQUEST',
          `slurm_account: user ${user} has no Unix account; set one with it (--unix-user ACCOUNT)`,
        );
    }
    const now = now_ms();
    // A user's new token never outlives the token that made it.
    let expires_at_ms = body.expires_in_s === undefined ? undefined : now + body.expires_in_s * 1000;
    const own = principal.expires_at_ms;
    if (!principal.admin && own !== undefined) expires_at_ms = Math.min(expires_at_ms ?? own, own);
    const token = newToken('gpu');
    const record: TokenRecord = {
      hash: hashToken(token),
      user,
      admin: false,
      created_at_ms: now,
      ...(expires_at_ms !== undefined ? { expires_at_ms } : {}),
    };
    await store.putToken(record);
    return c.json({ ...tokenView(record), token }, 201);
  });

  app.get('/v1/tokens', async (c) => {
    const principal = requireUser(c.get('principal'));
    const tokens = await store.listTokens(principal.admin ? c.req.query('user') : principal.user);
    return c.json(tokens.map(tokenView));
  });

  app.delete('/v1/tokens/:id', async (c) => {
    const principal = requireUser(c.get('principal'));
    const id = c.req.param('id');
    const found = (await store.listTokens(principal.admin ? undefined : principal.user)).filter((t) =>
      t.hash.startsWith(id),
    );
    // Another user's token is reported as unknown: ids are not a way to learn who has tokens.
    if (id.length < 6 || found.length === 0)
      throw new GoodputError('E_NOT_FOUND', `no token '${id}' (see 'goodput token ls')`);
    if (found.length > 1)
      throw new GoodputError('E_BAD_REQUEST', `token id '${id}' is ambiguous; give more characters`);
    const token = found[0]!;
    if (token.admin)
      throw new GoodputError(
        'E_CONFLICT',
        'the admin token is revoked by deleting admin-token in the data directory and restarting the server',
      );
    await store.revokeToken(token.hash, now_ms());
    return c.json(tokenView((await store.findToken(token.hash))!));
  });
}
