import type Database from 'better-sqlite3';
import { GoodputError } from '../../core/errors.js';
import type { JobRecord } from '../types.js';
import { advanceMark } from './durability.js';
import { eventCrc, toJob, type Row } from './rows.js';

/**
 * What the SQLite store's query modules share: the connection, the clock, the hot prepared
 * statements, and the two write helpers every evented write goes through. Built once by
 * SqliteStore; the modules take it as their first argument so each stays a set of plain functions.
 */
export interface StoreCore {
  readonly db: Database.Database;
  readonly now_ms: () => number;
  /** The job's raw row, or undefined. */
  jobRow(id: string): Row | undefined;
  /** The job's state column, or undefined when there is no such job. */
  jobState(id: string): string | undefined;
  /** The job, or E_NOT_FOUND. */
  mustGet(id: string): JobRecord;
  /** Appends an event with the checksum of its text (rows.ts `eventCrc`, checked when read). */
  event(
    job_id: string,
    at_ms: number,
    actor: string,
    kind: string,
    from: string | null,
    to: string | null,
    reason: string,
    data: string,
  ): void;
  /**
   * Moves the high-water mark to the newest event just committed (durability.ts `advanceMark`).
   * Call it after the transaction that added events commits. Returns true (for chaining).
   */
  advanceHighWater(): true;
}

/** Prepares the shared statements of `db`; `highWater` is the mark file kept after evented writes, if any. */
export function storeCore(
  db: Database.Database,
  now_ms: () => number,
  highWater: { file: string; value: number } | undefined,
): StoreCore {
  const getJob = db.prepare('SELECT * FROM jobs WHERE id = ?');
  const jobState = db.prepare('SELECT state FROM jobs WHERE id = ?').pluck();
  const insertEvent = db.prepare(
    'INSERT INTO events (job_id, at_ms, actor, kind, from_state, to_state, reason, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const jobRow = (id: string): Row | undefined => getJob.get(id) as Row | undefined;
  return {
    db,
    now_ms,
    jobRow,
    jobState: (id) => jobState.get(id) as string | undefined,
    mustGet(id) {
      const row = jobRow(id);
      if (!row) throw new GoodputError('E_NOT_FOUND', `no job ${id}`);
      return toJob(row);
    },
    event(job_id, at_ms, actor, kind, from, to, reason, data) {
      insertEvent.run(job_id, at_ms, actor, kind, from, to, reason, data, eventCrc(actor, kind, reason, data));
    },
    advanceHighWater() {
      if (highWater) advanceMark(db, highWater);
      return true;
    },
  };
}
