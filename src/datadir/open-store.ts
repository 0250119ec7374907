/**
 * Opening the server's store, refusing to serve from one that is damaged or lost acknowledged
 * work. The checks and the restore procedure are documented in docs/control-plane.md
 * ("Store integrity, backup and restore").
 */
import Database from 'better-sqlite3';
import { GoodputError } from '../core/errors.js';
import { highWaterPath, newestEventId, quickCheck, readHighWater, writeHighWater } from '../store/sqlite/durability.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { createPrivateFile } from './secure.js';

export interface OpenStoreOptions {
  /** Start even though the high-water mark shows lost work (then the mark is reset). */
  accept_store_loss?: boolean;
  log: (line: string) => void;
}

const RESTORE =
  "stop the server and restore the newest backup with 'goodput restore FILE' (docs/control-plane.md, Store integrity, backup and restore)";

/**
 * Opens `db_path` (created 0600, so that its -wal and -shm are 0600 too) after checking it on a
 * separate connection: PRAGMA quick_check, and the newest event against the high-water mark.
 * Throws E_STORE_DAMAGED or E_STORE_LOST instead of serving from such a store.
 */
export async function openCheckedStore(db_path: string, o: OpenStoreOptions): Promise<SqliteStore> {
  createPrivateFile(db_path);
  const { problems, newest } = inspect(db_path);
  if (problems.length > 0) {
    throw new GoodputError(
      'E_STORE_DAMAGED',
      `the store ${db_path} is damaged (quick_check: ${problems.slice(0, 3).join('; ')}); refusing to serve from it: ${RESTORE}`,
    );
  }
  const markFile = highWaterPath(db_path);
  const mark = readHighWater(markFile);
  if (mark !== undefined && newest < mark) {
    const what =
      `the store ${db_path} lost acknowledged work: its newest event is #${newest}, but #${mark} ` +
      `had been committed (its WAL ${db_path}-wal was deleted or damaged, or an older copy ` +
      `replaced it)`;
    if (!o.accept_store_loss)
      throw new GoodputError(
        'E_STORE_LOST',
        `${what}; ${RESTORE}, or start with --accept-store-loss to serve from it as it is`,
      );
    o.log(`WARNING: ${what}; serving from it anyway (--accept-store-loss)`);
  }
  writeHighWater(markFile, newest);
  return new SqliteStore(db_path, { high_water_file: markFile });
}

/** quick_check's problems and the newest event id, read on a connection of its own. */
function inspect(db_path: string): { problems: string[]; newest: number } {
  let db: Database.Database | undefined;
  try {
    db = new Database(db_path, { fileMustExist: true });
    return { problems: quickCheck(db), newest: newestEventId(db) };
  } catch (error) {
    throw new GoodputError(
      'E_STORE_DAMAGED',
      `the store ${db_path} is damaged: cannot read it (${(error as Error).message}); refusing to serve from it: ${RESTORE}`,
    );
  } finally {
    db?.close();
  }
}
