/**
 * Paged, filtered job listing (keyset paging on (submitted_at_ms, rowid)): each page is one
 * indexed range scan of at most `limit + 1` rows, whatever the store's size, so a listing never
 * holds the event loop for long.
 */
import type Database from 'better-sqlite3';
import { GoodputError } from '../../core/errors.js';
import type { CancelQuery, JobPage, JobPageQuery, JobQuery } from '../store.js';
import type { JobRecord } from '../types.js';
import type { JobState } from '../types.js';
import { toJob, type Row } from './rows.js';

/** The opaque cursor of a page: where the next one starts. */
function encodeCursor(submitted_at_ms: number, rowid: number): string {
  return Buffer.from(`${submitted_at_ms}.${rowid}`).toString('base64url');
}

function decodeCursor(cursor: string): { at_ms: number; rowid: number } {
  const m = /^(-?\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m)
    throw new GoodputError(
      'E_BAD_REQUEST',
      `cursor '${cursor.slice(0, 40)}' is not one this server returned; start again without it`,
    );
  return { at_ms: Number(m[1]), rowid: Number(m[2]) };
}

/**
 * The WHERE terms (joined with AND) and their arguments of the filters jobs are listed and
 * cancelled by: owner, name, and states (an empty list matches no job). No term: every job.
 * `state_column` '+state' keeps SQLite's planner off the state index where another is the
 * selective one.
 */
export function jobFilter(q: CancelQuery, state_column = 'state'): { where: string[]; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  if (q.user !== undefined) {
    where.push('user = ?');
    args.push(q.user);
  }
  if (q.name !== undefined) {
    where.push('name = ?');
    args.push(q.name);
  }
  if (q.states !== undefined) {
    where.push(`${state_column} IN (${q.states.map(() => '?').join(', ') || "''"})`);
    args.push(...q.states);
  }
  return { where, args };
}

/** One page of jobs matching `q`, newest first unless `q.order` is 'asc'. */
export function jobPage(db: Database.Database, q: JobPageQuery): JobPage {
  const { where, args } = jobFilter(q);
  if (q.since_ms !== undefined) {
    where.push('submitted_at_ms >= ?');
    args.push(q.since_ms);
  }
  const asc = q.order === 'asc';
  if (q.cursor !== undefined) {
    const c = decodeCursor(q.cursor);
    where.push(asc ? '(submitted_at_ms, rowid) > (?, ?)' : '(submitted_at_ms, rowid) < (?, ?)');
    args.push(c.at_ms, c.rowid);
  }
  const dir = asc ? 'ASC' : 'DESC';
  const sql =
    `SELECT rowid AS _rowid, * FROM jobs ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ` +
    `ORDER BY submitted_at_ms ${dir}, rowid ${dir} LIMIT ?`;
  const rows = db.prepare(sql).all(...args, q.limit + 1) as Row[];
  const more = rows.length > q.limit;
  const kept = more ? rows.slice(0, q.limit) : rows;
  const last = kept[kept.length - 1];
  return {
    jobs: kept.map(toJob),
    next_cursor: more && last ? encodeCursor(last.submitted_at_ms as number, last._rowid as number) : null,
  };
}

/** Jobs per state (all of them: one indexed aggregate, no rows built). */
export function countByState(db: Database.Database): Map<JobState, number> {
  const rows = db.prepare('SELECT state, count(*) AS n FROM jobs GROUP BY state').all() as {
    state: JobState;
    n: number;
  }[];
  return new Map(rows.map((r) => [r.state, r.n]));
}

/** Jobs matching `query` in submission order (oldest first). */
export function listJobs(db: Database.Database, query: JobQuery): JobRecord[] {
  // With an end-time window, the window's index (jobs_finished) is the selective one: '+state'
  // keeps the planner from scanning every ended job through jobs_state instead.
  const { where, args } = jobFilter(query, query.ended_since_ms !== undefined ? '+state' : 'state');
  if (query.ended_since_ms !== undefined) {
    // Two ranges of jobs_finished; as one OR the planner walks jobs_submitted over every job.
    where.push(
      'rowid IN (SELECT rowid FROM jobs WHERE finished_at_ms IS NULL UNION ALL SELECT rowid FROM jobs WHERE finished_at_ms >= ?)',
    );
    args.push(query.ended_since_ms);
  }
  const sql = `SELECT * FROM jobs ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY submitted_at_ms, rowid`;
  return (db.prepare(sql).all(...args) as Row[]).map(toJob);
}
