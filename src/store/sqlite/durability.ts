/**
 * Guards of the SQLite store against silent loss: the integrity check at start, and the
 * high-water mark, a counter kept outside the database (the newest event id the store
 * acknowledged, in `<db>.seq`). Events are written by every job creation and transition, so a
 * database whose newest event is older than the mark lost acknowledged work: its WAL was deleted
 * or damaged, or an older copy of the file was put in its place.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type Database from 'better-sqlite3';

/** Problems `PRAGMA quick_check` finds (empty: the file is consistent). At most `max` lines. */
export function quickCheck(db: Database.Database, max = 10): string[] {
  const rows = db.pragma(`quick_check(${max})`) as { quick_check: string }[];
  return rows.map((r) => r.quick_check).filter((line) => line !== 'ok');
}

/** Newest event id in the database (0 when none, or before the schema exists). */
export function newestEventId(db: Database.Database): number {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get()) return 0;
  return (db.prepare('SELECT coalesce(max(id), 0) AS id FROM events').get() as { id: number }).id;
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

/** Records the mark atomically (0600). Not fsynced: it is as durable as the commits it follows. */
export function writeHighWater(path: string, value: number): void {
  writeFileSync(`${path}.tmp`, `${value}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}
