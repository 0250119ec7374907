/** Tokens, users' Unix accounts, share usage and the policy's saved memos in SQLite (SqliteStore's methods for them; see Store). */
import type Database from 'better-sqlite3';
import type { ShareUsage } from '../../core/cluster.js';
import type { PolicyMemoRecord } from '../store.js';
import type { TokenRecord } from '../types.js';
import { toToken, type Row } from './rows.js';

/** Stores a token (hash only); idempotent for the same hash. */
export function put(db: Database.Database, token: TokenRecord): void {
  db.prepare(
    'INSERT OR IGNORE INTO tokens (hash, user, admin, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?)',
  ).run(token.hash, token.user, token.admin ? 1 : 0, token.created_at_ms, token.expires_at_ms ?? null);
}

/** The token of `hash`, if any. */
export function find(db: Database.Database, hash: string): TokenRecord | undefined {
  const r = db.prepare('SELECT * FROM tokens WHERE hash = ?').get(hash) as Row | undefined;
  return r ? toToken(r) : undefined;
}

/** Tokens of one user or all, oldest first. */
export function list(db: Database.Database, user?: string): TokenRecord[] {
  const rows =
    user === undefined
      ? db.prepare('SELECT * FROM tokens ORDER BY created_at_ms, rowid').all()
      : db.prepare('SELECT * FROM tokens WHERE user = ? ORDER BY created_at_ms, rowid').all(user);
  return (rows as Row[]).map(toToken);
}

/** Marks a token revoked; false when unknown or already revoked. */
export function revoke(db: Database.Database, hash: string, at_ms: number): boolean {
  return (
    db.prepare('UPDATE tokens SET revoked_at_ms = ? WHERE hash = ? AND revoked_at_ms IS NULL').run(at_ms, hash)
      .changes > 0
  );
}

/** Sets the Unix account of `user` (replaces a previous one). */
export function setUnixUser(db: Database.Database, user: string, unix_user: string): void {
  db.prepare(
    'INSERT INTO users (user, unix_user) VALUES (?, ?) ON CONFLICT DO UPDATE SET unix_user = excluded.unix_user',
  ).run(user, unix_user);
}

/** The Unix account of `user`, if one was set. */
export function getUnixUser(db: Database.Database, user: string): string | undefined {
  return (db.prepare('SELECT unix_user FROM users WHERE user = ?').get(user) as { unix_user: string } | undefined)
    ?.unix_user;
}

/** Sets the Slurm account of `user`, who must have a Unix account already; false when none is set. */
export function setSlurmAccount(db: Database.Database, user: string, account: string): boolean {
  return db.prepare('UPDATE users SET slurm_account = ? WHERE user = ?').run(account, user).changes > 0;
}

/** The Slurm account of `user`, if one was set. */
export function getSlurmAccount(db: Database.Database, user: string): string | undefined {
  const row = db.prepare('SELECT slurm_account FROM users WHERE user = ?').get(user) as
    { slurm_account: string | null } | undefined;
  return row?.slurm_account ?? undefined;
}

/** The decayed usage of teams and users, or undefined before the first round that kept it. */
export function getShareUsage(db: Database.Database): ShareUsage | undefined {
  const rows = db.prepare('SELECT kind, name, device_s, at_ms FROM share_usage').all() as {
    kind: string;
    name: string;
    device_s: number;
    at_ms: number;
  }[];
  const clock = rows.find((r) => r.kind === 'team' && r.name === '');
  if (!clock) return undefined;
  const teams: Record<string, number> = {};
  const users: Record<string, number> = {};
  for (const r of rows) if (r.name !== '') (r.kind === 'team' ? teams : users)[r.name] = r.device_s;
  return { at_s: clock.at_ms / 1000, teams, users };
}

/** Replaces the decayed usage (a row of team '' keeps its time, also when nobody has used anything). */
export function putShareUsage(db: Database.Database, usage: ShareUsage): void {
  const at = Math.round(usage.at_s * 1000);
  const insert = db.prepare('INSERT INTO share_usage (kind, name, device_s, at_ms) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    db.prepare('DELETE FROM share_usage').run();
    insert.run('team', '', 0, at);
    for (const [name, v] of Object.entries(usage.teams)) if (name !== '') insert.run('team', name, v, at);
    for (const [name, v] of Object.entries(usage.users)) if (name !== '') insert.run('user', name, v, at);
  })();
}

/**
 * Device-seconds of every attempt's replicas between `since_ms` and `now_ms` (a live replica
 * counts up to now), by job owner and GPU type ('' when its launch recorded none).
 */
export function deviceTimeSince(
  db: Database.Database,
  since_ms: number,
  now_ms: number,
): { user: string; gpu_type: string; device_s: number }[] {
  return db
    .prepare(
      `SELECT j.user AS user, r.gpu_type AS gpu_type,
              sum(max(0, min(coalesce(r.exited_at_ms, ?), ?) - max(r.started_at_ms, ?))) / 1000.0 AS device_s
         FROM replicas r JOIN jobs j ON j.id = r.job_id
        WHERE coalesce(r.exited_at_ms, ?) > ?
        GROUP BY j.user, r.gpu_type ORDER BY j.user, r.gpu_type`,
    )
    .all(now_ms, now_ms, since_ms, now_ms, since_ms) as { user: string; gpu_type: string; device_s: number }[];
}

/** The policy's saved memos, or undefined before any were saved. */
export function getPolicyMemo(db: Database.Database): PolicyMemoRecord | undefined {
  const row = db.prepare('SELECT saved_ms, body FROM policy_memo WHERE id = 1').get() as
    { saved_ms: number; body: Buffer } | undefined;
  return row ? { saved_ms: row.saved_ms, body: new Uint8Array(row.body) } : undefined;
}

/** Replaces the policy's saved memos. */
export function putPolicyMemo(db: Database.Database, memo: PolicyMemoRecord): void {
  db.prepare('INSERT OR REPLACE INTO policy_memo (id, saved_ms, body) VALUES (1, ?, ?)').run(
    Math.round(memo.saved_ms),
    Buffer.from(memo.body.buffer, memo.body.byteOffset, memo.body.byteLength),
  );
}
