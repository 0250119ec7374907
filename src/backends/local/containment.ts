/**
 * Containment of a replica's processes beyond its process group: every process a replica starts
 * inherits its environment, so the processes still carrying the replica's `GOODPUT_JOB_ID`,
 * `GOODPUT_ATTEMPT` and `RANK` (read from /proc/PID/environ) are its own, also those that left
 * its process group or session (`setsid`, a double fork) and were re-parented. They are killed
 * when the replica ends. A process that clears its whole environment before it detaches is
 * not found (see docs/control-plane.md, "Local backend"). With the job's folder given, its
 * `GOODPUT_CHECKPOINT_DIR` is a marker too: a job id is unique within one server's store only, and
 * another server on the machine (another user's, a test's, a `goodput profile` run) may hold the
 * same id.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { jobDirs } from '../run-files.js';

/**
 * Pids of the live processes that carry the markers of `job_id`'s attempt (and of `rank` and of
 * the job folder `job_dir`, when given).
 */
export function markedProcesses(job_id: string, attempt: number, rank?: number, job_dir?: string): number[] {
  const want = [
    `GOODPUT_JOB_ID=${job_id}`,
    `GOODPUT_ATTEMPT=${attempt}`,
    ...(rank === undefined ? [] : [`RANK=${rank}`]),
    ...(job_dir === undefined ? [] : [`GOODPUT_CHECKPOINT_DIR=${jobDirs(job_dir).checkpoint}`]),
  ];
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const name of entries) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone, or not ours to read
    }
    const vars = new Set(environ.split('\0'));
    if (want.every((v) => vars.has(v))) found.push(pid);
  }
  return found;
}

/**
 * SIGKILLs every process of the replica (or of the whole attempt without `rank`; of the job whose
 * folder is `job_dir`, when given); returns how many.
 */
export function sweepMarked(job_id: string, attempt: number, rank?: number, job_dir?: string): number {
  let killed = 0;
  for (const pid of markedProcesses(job_id, attempt, rank, job_dir)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // already gone
    }
  }
  return killed;
}
