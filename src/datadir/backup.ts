/**
 * Backup and restore of the server's store. A backup is an online copy through SQLite's backup
 * API (consistent while the server keeps serving), checked with quick_check and written 0600.
 * A restore refuses while a server uses the data directory, checks the copy, puts it in place of
 * the store (dropping the old WAL) and sets the high-water mark to the copy's newest event, so
 * the next start accepts it.
 */
import { copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { GoodputError } from '../core/errors.js';
import { highWaterPath, newestEventId, quickCheck, writeHighWater } from '../store/sqlite/durability.js';
import { createPrivateFile } from './secure.js';
import { serverLockHolder } from './server-lock.js';

/** What a backup or restore did. */
export interface StoreCopy {
  path: string;
  bytes: number;
  jobs: number;
  newest_event: number;
}

/** Copies the store at `db_path` to `dest` (replaced atomically). Works while a server runs. */
export async function backupStore(db_path: string, dest: string): Promise<StoreCopy> {
  if (!existsSync(db_path)) throw new GoodputError('E_INPUT', `no store at ${db_path}; pass --data-dir`);
  const db = new Database(db_path, { fileMustExist: true });
  const tmp = `${dest}.tmp`;
  try {
    db.pragma('busy_timeout = 5000');
    createPrivateFile(tmp);
    await db.backup(tmp);
  } finally {
    db.close();
  }
  const copy = describe(tmp);
  renameSync(tmp, dest);
  return { ...copy, path: dest };
}

/** Puts the backup `src` in place of the store at `db_path`; `server_lock` is the server's pid file. */
export function restoreStore(db_path: string, src: string, server_lock: string): StoreCopy {
  const pid = serverLockHolder(server_lock);
  if (pid !== undefined) throw new GoodputError('E_RUNNING', `a goodput server (pid ${pid}) uses this data directory; stop it before a restore`);
  if (!existsSync(src)) throw new GoodputError('E_INPUT', `no backup at ${src}`);
  const tmp = `${db_path}.restore`;
  createPrivateFile(tmp);
  copyFileSync(src, tmp);
  const copy = describe(tmp);
  for (const suffix of ['-wal', '-shm']) rmSync(db_path + suffix, { force: true });
  renameSync(tmp, db_path);
  writeHighWater(highWaterPath(db_path), copy.newest_event);
  return { ...copy, path: db_path };
}

/** Checks a copy (E_STORE_DAMAGED when quick_check fails) and counts what it holds. */
function describe(path: string): StoreCopy {
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true, readonly: true });
  } catch (error) {
    throw new GoodputError('E_STORE_DAMAGED', `${path} is not a goodput store: ${(error as Error).message}`);
  }
  try {
    const problems = quickCheck(db);
    if (problems.length > 0) throw new GoodputError('E_STORE_DAMAGED', `${path} is damaged (quick_check: ${problems.slice(0, 3).join('; ')})`);
    const jobs = (db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
    return { path, bytes: statSync(path).size, jobs, newest_event: newestEventId(db) };
  } catch (error) {
    if (error instanceof GoodputError) throw error;
    throw new GoodputError('E_STORE_DAMAGED', `${path} is not a goodput store: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}
