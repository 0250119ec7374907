/**
 * The files every backend keeps in a job's directory (on a file system the nodes share, for
 * Slurm): checkpoint/, logs/replica-<rank>.log, and run/attempt-<a>-rank-<r>.{pid,exit}, written
 * by the replica wrappers.
 */
import { readFileSync } from 'node:fs';
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

/** The exit status the replica's wrapper recorded, or undefined while there is none. */
export function readExitFile(job_dir: string, attempt: number, rank: number): number | undefined {
  try {
    const value = Number(readFileSync(runFileBase(job_dir, attempt, rank) + '.exit', 'utf8').trim());
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
