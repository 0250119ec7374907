/**
 * Space kept in reserve for recovery on the data directory's disk: a file of zeros (`reserve`)
 * that the server gives up the moment the disk is full, so that the store can still commit what
 * recovery needs (exits, state changes, the launches that free devices), and takes back once
 * space has freed.
 */
import { closeSync, existsSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { freeBytes, MIN_FREE_BYTES } from './disk-space.js';

/** Size of the reserve. */
export const RESERVE_BYTES = 8 << 20;

/** The reserve file of a data directory. */
export function reservePath(data_dir: string): string {
  return join(data_dir, 'reserve');
}

/** Writes the reserve (zeros, 0600; written aside, then renamed); false when the disk has no room for it. */
function takeReserve(path: string): boolean {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    const chunk = Buffer.alloc(1 << 20);
    for (let n = 0; n < RESERVE_BYTES; n += chunk.length) writeSync(fd, chunk);
  } catch {
    closeSync(fd);
    rmSync(tmp, { force: true });
    return false;
  }
  closeSync(fd);
  renameSync(tmp, path);
  return true;
}

/**
 * One check: gives the reserve up when the disk is full (less than MIN_FREE_BYTES free), takes
 * it back when there is room for it and twice as much besides. Returns what it did.
 */
export function keepReserve(data_dir: string): 'released' | 'taken' | undefined {
  const path = reservePath(data_dir);
  const free = freeBytes(data_dir);
  if (free === undefined) return undefined;
  const held = existsSync(path);
  if (held && free < MIN_FREE_BYTES) {
    rmSync(path, { force: true });
    return 'released';
  }
  if (!held && free >= MIN_FREE_BYTES + 2 * RESERVE_BYTES && takeReserve(path)) return 'taken';
  return undefined;
}
