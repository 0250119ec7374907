/**
 * Guards of the SQLite store against silent loss: the integrity check at start, and the
 * high-water mark, a counter kept outside the database (the newest event id the store
 * acknowledged, in `<db>.seq`). Events are written by every job creation and transition, so a
 * database whose newest event is older than the mark lost acknowledged work: its WAL was deleted
 * or damaged, or an older copy of the file was put in its place.
 */
import { closeSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import type Database from 'better-sqlite3';

/** Problems `PRAGMA quick_check` finds (empty: the file is consistent). At most `max` lines. */
export function quickCheck(db: Database.Database, max = 10): string[] {
  const rows = db.pragma(`quick_check(${max})`) as { quick_check: string }[];
  return rows.map((r) => r.quick_check).filter((line) => line !== 'ok');
}

/**
 * Newest event id the database ever wrote (0 when none, or before the schema exists): the
 * AUTOINCREMENT counter too, so events removed with their ended jobs (job retention) do not read
 * as lost; it commits with the events, so a lost WAL or an older copy still shows.
 */
export function newestEventId(db: Database.Database): number {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get()) return 0;
  const sequence = "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)";
  return (
    db.prepare(`SELECT max(coalesce((SELECT max(id) FROM events), 0), ${sequence}) AS id`).get() as { id: number }
  ).id;
}

/** The high-water mark file of a database. */
export function highWaterPath(db_path: string): string {
  return `${db_path}.seq`;
}

/** The recorded mark, or undefined when there is no (readable) file. */
export function readHighWater(path: string): number | undefined {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Width of the mark in its file: every mark is written over the same bytes. */
const MARK_CHARS = 20;

/**
 * Records the mark (0600). Not fsynced: it is as durable as the commits it follows. The first
 * write creates the file (write + rename); later ones overwrite its fixed-width content in place
 * (one small write within the first block), so they need no new disk space and go on working on
 * a full disk.
 */
export function writeHighWater(path: string, value: number): void {
  const text = `${String(value).padStart(MARK_CHARS)}\n`;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r+');
  } catch {
    writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    return;
  }
  try {
    writeSync(fd, text, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves `mark` to the newest event in `db`. Best effort: it runs after a commit, so a failed
 * write of the mark (a full disk) must not make the operation look failed; the mark stays lower
 * (it then detects less, never more) and the next commit writes it again.
 */
export function advanceMark(db: Database.Database, mark: { file: string; value: number }): void {
  const newest = newestEventId(db);
  if (newest <= mark.value) return;
  try {
    writeHighWater(mark.file, newest);
    mark.value = newest;
  } catch {
    // Retried by the next commit.
  }
}
