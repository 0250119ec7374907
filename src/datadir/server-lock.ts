import { existsSync, readFileSync } from 'node:fs';
import { isAlive } from '../backends/local/process-info.js';

/**
 * The pid of the live server, other than this process, that holds the data directory's lock file
 * `lock`; undefined when there is none (no lock file, or a stale one left by a killed server).
 */
export function serverLockHolder(lock: string): number | undefined {
  if (!existsSync(lock)) return undefined;
  const pid = Number(readFileSync(lock, 'utf8').trim());
  return Number.isInteger(pid) && pid !== process.pid && isAlive(pid, '') ? pid : undefined;
}
