/**
 * Permissions of the data directory. Everything the server creates there is private to the
 * server's Unix user, whatever the umask and whatever modes the files had before: directories
 * 0700 and files 0600. In multi-user mode (`--run-as-owner`) the data directory and `jobs/` are
 * 0711 instead, so a replica running as its owner can reach its own job directory by path but
 * can list nothing; the secrets, the store and other jobs' directories stay closed to it.
 */
import { chmodSync, closeSync, lstatSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GoodputError } from '../core/errors.js';
import { directoryProblem } from '../util/directory.js';

/** Mode of the data directory and of `jobs/`: private, or traversable (multi-user mode). */
export function dataDirMode(multi_user: boolean): number {
  return multi_user ? 0o711 : 0o700;
}

/**
 * Creates or repairs the data directory: refuses (E_DATA_DIR) one that is not a directory or
 * not owned by this process's user, and narrows every too-open mode of the directory, `jobs/`
 * and the files directly in it. Returns one line per mode it changed (the start logs them).
 */
export function secureDataDir(data_dir: string, multi_user: boolean): string[] {
  const fixed: string[] = [];
  const dirMode = dataDirMode(multi_user);
  for (const dir of [data_dir, join(data_dir, 'jobs')]) {
    makeDataDir(dir, dirMode);
    const st = lstatSync(dir);
    if (!st.isDirectory())
      throw new GoodputError(
        'E_DATA_DIR',
        `${dir} is not a directory (a symbolic link is refused too); pass another --data-dir`,
      );
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) {
      throw new GoodputError(
        'E_DATA_DIR',
        `${dir} belongs to uid ${st.uid}, not to the server's user (uid ${uid}); chown it or pass another --data-dir`,
      );
    }
    fixed.push(...narrow(dir, st.mode, dirMode));
  }
  for (const name of readdirSync(data_dir)) {
    const path = join(data_dir, name);
    const st = lstatSync(path);
    if (st.isFile()) fixed.push(...narrow(path, st.mode, 0o600));
  }
  return fixed;
}

/**
 * Creates directory `dir` and its missing parents with `mode`, or refuses with E_DATA_DIR saying
 * why it cannot be the data directory (directoryProblem, util/directory.ts): a path the user
 * chose, not a bug.
 */
export function makeDataDir(dir: string, mode: number): void {
  const problem = directoryProblem(dir, mode);
  if (problem !== undefined)
    throw new GoodputError(
      'E_DATA_DIR',
      `cannot use ${dir} as the data directory: ${problem}; pass another --data-dir or set GOODPUT_DATA_DIR`,
    );
}

/** Creates `path` as an empty 0600 file if missing (so that SQLite's -wal and -shm inherit 0600). */
export function createPrivateFile(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);
}

function narrow(path: string, mode: number, wanted: number): string[] {
  const bits = mode & 0o777;
  if (bits === wanted) return [];
  chmodSync(path, wanted);
  return [`fixed the mode of ${path}: ${bits.toString(8).padStart(4, '0')} -> ${wanted.toString(8).padStart(4, '0')}`];
}
