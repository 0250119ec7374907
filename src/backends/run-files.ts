/**
 * The files every backend keeps in a job's directory (on a file system the nodes share, for
 * Slurm): checkpoint/, logs/replica-<rank>.log, and run/attempt-<a>-rank-<r>.{pid,exit}, written
 * by the replica wrappers.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** Directories of a job under its job_dir. */
export function jobDirs(job_dir: string): { checkpoint: string; logs: string; run: string } {
  return { checkpoint: join(job_dir, 'checkpoint'), logs: join(job_dir, 'logs'), run: join(job_dir, 'run') };
}

/** Name of a replica's log file in logs/; `rank` may be a shell variable (`$RANK`) in a wrapper script. */
export function replicaLogName(rank: number | string): string {
  return `replica-${rank}.log`;
}

/** Path of a replica's log: appended to by every attempt, read by `goodput logs` and the API. */
export function replicaLogPath(job_dir: string, rank: number): string {
  return join(jobDirs(job_dir).logs, replicaLogName(rank));
}

/** Path of a replica's run file without its suffix (`.pid`, `.exit`). */
export function runFileBase(job_dir: string, attempt: number, rank: number): string {
  return join(jobDirs(job_dir).run, `attempt-${attempt}-rank-${rank}`);
}

/**
 * The exit status the replica's wrapper recorded, or undefined while there is none. On Slurm as
 * the job's owner (--run-as-owner) run/ is the owner's, so the root server reads only a plain
 * file there: never through a symbolic link (a root-only file's number), never a FIFO (a read that
 * would block the server), and at most a few bytes.
 */
export function readExitFile(job_dir: string, attempt: number, rank: number): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(
      runFileBase(job_dir, attempt, rank) + '.exit',
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    if (!fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(32);
    const value = Number(
      buffer
        .subarray(0, readSync(fd, buffer, 0, buffer.length, 0))
        .toString('utf8')
        .trim(),
    );
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
