/**
 * Folders and files the user names (a data directory, an output file): whether they can be made
 * and written, as a reason to show rather than an errno stack. Node's recursive mkdir is avoided:
 * it loops for ever where a parent exists but refuses new entries with ENOENT (/proc).
 */
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Why directory `dir` cannot be created (with its missing parents, `mode`) and written in (a
 * file in the way, a read-only file system, no permission, a full disk); undefined when it is
 * ready, created if it was missing (one level at a time).
 */
export function directoryProblem(dir: string, mode: number): string | undefined {
  const missing: string[] = [];
  let at = dir;
  while (!existsSync(at)) {
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  if (existsSync(at) && !statSync(at).isDirectory()) return `${at} is not a directory`;
  for (const path of missing) {
    try {
      mkdirSync(path, { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return `${path}: ${errnoReason(error)}`;
    }
  }
  // Root may create a directory where it cannot write (a read-only mount holding it): try.
  const probe = join(dir, `.goodput-write-test-${process.pid}`);
  try {
    closeSync(openSync(probe, 'w', 0o600));
    rmSync(probe, { force: true });
  } catch (error) {
    return `${dir}: ${errnoReason(error)}`;
  }
  return undefined;
}

/** A file-system error as words a user acts on: permission denied, read-only file system, ... */
export function errnoReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'no space left on the device';
  return (error as Error).message;
}
