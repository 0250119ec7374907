/**
 * A full disk under the data directory, recognised and worded once: errors that mean "no space"
 * (ENOSPC, EDQUOT, SQLITE_FULL) and the free space of the data directory's file system.
 */
import { statfsSync } from 'node:fs';
import { GoodputError } from '../core/errors.js';

/** Free space below which the data directory counts as full (the store, logs and checkpoints share it). */
export const MIN_FREE_BYTES = 16 << 20;

/** Whether `error` (or its cause) says that a write found no space. */
export function isDiskFull(error: unknown): boolean {
  for (
    let e = error, depth = 0;
    e !== null && typeof e === 'object' && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === 'E_DISK_FULL') return true;
    if (/\bENOSPC\b|database or disk is full/.test(((e as { message?: unknown }).message as string) ?? '')) return true;
  }
  return false;
}

/** Bytes an unprivileged process may still write on the file system of `dir`; undefined when unknown. */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** `bytes` in MiB with one decimal, as the disk notes print it (`1.5 MiB`). */
export const mibText = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** Why the data directory counts as full now, or undefined when it has room (or the space is unknown). */
export function diskFullNote(dir: string, min_free_bytes = MIN_FREE_BYTES): string | undefined {
  const free = freeBytes(dir);
  if (free === undefined || free >= min_free_bytes) return undefined;
  return `the disk of the data directory ${dir} is full (${mibText(free)} free, less than ${mibText(min_free_bytes)})`;
}

/** E_DISK_FULL for a write that found no space under `dir` (what to do included). */
export function diskFullError(dir: string, cause: unknown): GoodputError {
  const free = freeBytes(dir);
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new GoodputError(
    'E_DISK_FULL',
    `the disk of the data directory ${dir} is full` +
      `${free !== undefined ? ` (${mibText(free)} free)` : ''}: ${detail}; free space there (old ` +
      `logs and checkpoints are under ${dir}/jobs) and try again`,
  );
}
