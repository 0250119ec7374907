/**
 * Backup and restore of the server's store. A backup is an online copy through SQLite's backup
 * API (consistent while the server keeps serving), checked with quick_check and written 0600.
 * A restore refuses while a server uses the data directory, checks the copy, puts it in place of
 * the store (dropping the old WAL) and sets the high-water mark to the copy's newest event, so
 * the next start accepts it.
 */
import { copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { GoodputError } from '../core/errors.js';
import { highWaterPath, newestEventId, quickCheck, writeHighWater } from '../store/sqlite/durability.js';
import { directoryProblem } from '../util/directory.js';
import { createPrivateFile, makeDataDir } from './secure.js';
import { serverLockHolder } from './server-lock.js';

/** What a backup or restore did. */
export interface StoreCopy {
  path: string;
  bytes: number;
  jobs: number;
  newest_event: number;
}

/** Removes a scratch copy with the WAL and shared-memory files SQLite may have made beside it. */
function removeCopy(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/** Where a backup named `dest` goes: into it when it is a directory (a dated file name), else `dest`. */
export function backupTarget(dest: string, now_ms = Date.now()): string {
  const isDir = dest.endsWith('/') || (existsSync(dest) && statSync(dest).isDirectory());
  return isDir ? join(dest, `goodput-${new Date(now_ms).toISOString().replace(/[:.]/g, '-')}.sqlite`) : dest;
}

/**
 * Copies the store at `db_path` to `dest` (a file, or a directory to write a dated file into),
 * atomically; refuses (E_EXISTS) to replace an existing file unless `force`. Works while a
 * server runs. Nothing is left behind when it fails.
 */
export async function backupStore(
  db_path: string,
  dest: string,
  options: { force?: boolean } = {},
): Promise<StoreCopy> {
  if (!existsSync(db_path)) throw new GoodputError('E_INPUT', `no store at ${db_path}; pass --data-dir`);
  const target = backupTarget(dest);
  if (existsSync(target) && options.force !== true)
    throw new GoodputError('E_EXISTS', `${target} exists; pass --force to replace it, or name another file`);
  if (!existsSync(dirname(target)))
    throw new GoodputError('E_INPUT', `no directory ${dirname(target)} to write the backup into`);
  const problem = directoryProblem(dirname(target), 0o700);
  if (problem !== undefined)
    throw new GoodputError('E_OUTPUT', `cannot write the backup to ${target}: ${problem}; name another file`);
  const db = new Database(db_path, { fileMustExist: true });
  const tmp = `${target}.tmp`;
  try {
    try {
      db.pragma('busy_timeout = 5000');
      createPrivateFile(tmp);
      await db.backup(tmp);
    } finally {
      db.close();
    }
    const copy = describe(tmp);
    for (const suffix of ['-wal', '-shm']) rmSync(tmp + suffix, { force: true });
    renameSync(tmp, target);
    return { ...copy, path: target };
  } catch (error) {
    removeCopy(tmp);
    throw error;
  }
}

/** Puts the backup `src` in place of the store at `db_path`; `server_lock` is the server's pid file. Nothing is left behind when refused. */
export function restoreStore(db_path: string, src: string, server_lock: string): StoreCopy {
  const pid = serverLockHolder(server_lock);
  if (pid !== undefined)
    throw new GoodputError(
      'E_RUNNING',
      `a goodput server (pid ${pid}) uses this data directory; stop it before a restore`,
    );
  if (!existsSync(src)) throw new GoodputError('E_INPUT', `no backup at ${src}`);
  if (!statSync(src).isFile())
    throw new GoodputError('E_INPUT', `${src} is not a backup file (a backup is one file written by 'goodput backup')`);
  // A new machine's data directory does not exist yet: restoring a backup there is how it starts.
  makeDataDir(dirname(db_path), 0o700);
  const tmp = `${db_path}.restore`;
  let copy: StoreCopy;
  try {
    createPrivateFile(tmp);
    copyFileSync(src, tmp);
    copy = describe(tmp);
    for (const suffix of ['-wal', '-shm']) rmSync(tmp + suffix, { force: true });
  } catch (error) {
    removeCopy(tmp);
    // The check ran on the copy; the user knows the file by the name they gave.
    if (error instanceof GoodputError)
      throw new GoodputError(error.code, error.message.replace(tmp, src), error.exitCode);
    throw error;
  }
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
    if (problems.length > 0)
      throw new GoodputError('E_STORE_DAMAGED', `${path} is damaged (quick_check: ${problems.slice(0, 3).join('; ')})`);
    const jobs = (db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
    return { path, bytes: statSync(path).size, jobs, newest_event: newestEventId(db) };
  } catch (error) {
    if (error instanceof GoodputError) throw error;
    throw new GoodputError('E_STORE_DAMAGED', `${path} is not a goodput store: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}
