/**
 * The store operations whose cost must follow a user's active work, not the store's history:
 * per-user submit limits (counted on jobs_user_state), bulk cancel by filter, and retention of
 * ended jobs (jobs_finished) with their GPU time kept per user in `usage_removed`. Each runs
 * inside the caller's transaction (SqliteStore wraps them).
 */
import type Database from 'better-sqlite3';
import { GoodputError } from '../../core/errors.js';
import { ACTIVE_STATES, refusal, serviceSince } from '../lifecycle.js';
import type { CancelledJob, CancelQuery, UserJobLimits, UserUsage } from '../store.js';
import type { JobState } from '../types.js';
import { jobFilter } from './job-page.js';
import { eventCrc, toJob, type Row } from './rows.js';

const limited = (n: number) => Number.isFinite(n) && n > 0;

/**
 * Throws E_JOB_LIMIT when `user` is at one of `limits` (run inside createJob's transaction, so
 * two concurrent submits cannot both take the last place).
 */
export function checkUserLimits(db: Database.Database, user: string, limits: UserJobLimits): void {
  const count = (states: readonly JobState[]) =>
    db
      .prepare(`SELECT count(*) FROM jobs WHERE user = ? AND state IN (${states.map(() => '?').join(', ')})`)
      .pluck()
      .get(user, ...states) as number;
  if (limited(limits.max_queued)) {
    const queued = count(['queued']);
    if (queued >= limits.max_queued) {
      throw new GoodputError(
        'E_JOB_LIMIT',
        `user ${user} has ${queued} queued jobs, the most this server accepts per user (goodput up ` +
          `--max-queued-jobs-per-user ${limits.max_queued}); submit more once some have started, or ` +
          `cancel queued ones (goodput cancel --user ${user} --state queued)`,
      );
    }
  }
  if (limited(limits.max_active)) {
    const active = count(ACTIVE_STATES);
    if (active >= limits.max_active) {
      throw new GoodputError(
        'E_JOB_LIMIT',
        `user ${user} has ${active} jobs not ended, the most this server accepts per user (goodput ` +
          `up --max-active-jobs-per-user ${limits.max_active}); submit more once some have ended, or ` +
          `cancel some (goodput cancel --user ${user} --state queued)`,
      );
    }
  }
}

/**
 * Cancels every active job matching `q` (finishJob's changes and event, per job). Runs inside
 * one transaction of the caller.
 */
export function cancelMatching(
  db: Database.Database,
  q: CancelQuery,
  now_ms: number,
  actor: string,
  reason: string,
): CancelledJob[] {
  const states = (q.states ?? ACTIVE_STATES).filter((s) => refusal('finish', s) === undefined);
  if (states.length === 0) return [];
  const { where, args } = jobFilter({ ...q, states });
  const rows = db
    .prepare(`SELECT * FROM jobs WHERE ${where.join(' AND ')} ORDER BY submitted_at_ms, rowid`)
    .all(...args) as Row[];
  const update = db.prepare(
    "UPDATE jobs SET state = 'cancelled', reason = ?, allocation = '[]', devices = '[]', " +
      'finished_at_ms = ?, attained_service_gpu_s = ?, launched_at_ms = NULL, stop_kind = NULL ' +
      'WHERE id = ?',
  );
  const event = db.prepare(
    'INSERT INTO events (job_id, at_ms, actor, kind, from_state, to_state, reason, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return rows.map((row) => {
    const job = toJob(row);
    update.run(reason, now_ms, job.attained_service_gpu_s + serviceSince(job, now_ms), job.id);
    event.run(
      job.id,
      now_ms,
      actor,
      'cancelled',
      job.state,
      'cancelled',
      reason,
      '{}',
      eventCrc(actor, 'cancelled', reason, '{}'),
    );
    return { id: job.id, user: job.user, name: job.name, from: job.state };
  });
}

/**
 * Removes up to `limit` jobs that ended before `before_ms`, oldest end first, with their rows in
 * every per-job table; adds their count and GPU time to `usage_removed`. Runs inside one
 * transaction of the caller.
 */
export function removeEnded(db: Database.Database, before_ms: number, limit: number): string[] {
  const rows = db
    .prepare(
      'SELECT id, user, attained_service_gpu_s AS gpu_s FROM jobs WHERE finished_at_ms < ? ORDER BY finished_at_ms LIMIT ?',
    )
    .all(before_ms, limit) as { id: string; user: string; gpu_s: number }[];
  if (rows.length === 0) return [];
  const perUser = new Map<string, { jobs: number; gpu_s: number }>();
  for (const r of rows) {
    const u = perUser.get(r.user) ?? { jobs: 0, gpu_s: 0 };
    u.jobs += 1;
    u.gpu_s += r.gpu_s;
    perUser.set(r.user, u);
  }
  const add = db.prepare(
    'INSERT INTO usage_removed (user, jobs, gpu_s) VALUES (?, ?, ?) ON CONFLICT(user) DO ' +
      'UPDATE SET jobs = jobs + excluded.jobs, gpu_s = gpu_s + excluded.gpu_s',
  );
  for (const [user, u] of perUser) add.run(user, u.jobs, u.gpu_s);
  // Replicas reference jobs (foreign key): they go first, the job rows last.
  const tables = ['replicas', 'events', 'reports', 'profiles', 'submit_keys', 'jobs'] as const;
  const remove = tables.map((t) => db.prepare(`DELETE FROM ${t} WHERE ${t === 'jobs' ? 'id' : 'job_id'} = ?`));
  for (const r of rows) for (const statement of remove) statement.run(r.id);
  return rows.map((r) => r.id);
}

/** Per-user GPU time and job count, stored jobs and removed ones together, by user. */
export function usageByUser(db: Database.Database): UserUsage[] {
  const rows = db
    .prepare(
      `SELECT user, sum(jobs) AS jobs, sum(gpu_s) AS gpu_s FROM (
         SELECT user, count(*) AS jobs, sum(attained_service_gpu_s) AS gpu_s FROM jobs GROUP BY user
         UNION ALL SELECT user, jobs, gpu_s FROM usage_removed
       ) GROUP BY user ORDER BY user`,
    )
    .all() as UserUsage[];
  return rows.map((r) => ({ user: r.user, jobs: r.jobs, gpu_s: r.gpu_s }));
}
