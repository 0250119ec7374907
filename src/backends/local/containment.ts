/**
 * Containment of a replica's processes beyond its process group: every process a replica starts
 * inherits its environment, so the processes still carrying the replica's `GOODPUT_JOB_ID`,
 * `GOODPUT_ATTEMPT` and `RANK` (read from /proc/PID/environ) are its own, also those that left
 * its process group or session (`setsid`, a double fork) and were re-parented. They are killed
 * when the replica ends. A process that clears its whole environment before it detaches is
 * not found (see docs/control-plane.md, "Local backend").
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of the live processes that carry the markers of `job_id`'s attempt (and `rank`, when given). */
export function markedProcesses(job_id: string, attempt: number, rank?: number): number[] {
  const want = [
    `GOODPUT_JOB_ID=${job_id}`,
    `GOODPUT_ATTEMPT=${attempt}`,
    ...(rank === undefined ? [] : [`RANK=${rank}`]),
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

/** SIGKILLs every process of the replica (or of the whole attempt without `rank`); returns how many. */
export function sweepMarked(job_id: string, attempt: number, rank?: number): number {
  let killed = 0;
  for (const pid of markedProcesses(job_id, attempt, rank)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // already gone
    }
  }
  return killed;
}
