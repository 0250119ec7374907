/**
 * CPU time of the process's main thread alone, beside process.cpuUsage() (every thread): in a
 * first round V8's compiler threads add about as much again as the round's own work (issue #49),
 * and the two figures tell them apart. Linux only.
 */
import { existsSync, readFileSync } from 'node:fs';

const schedstat = `/proc/self/task/${process.pid}/schedstat`;

/** CPU time (ms) the main thread has used so far (Linux's schedstat); null where it cannot be read. */
export function mainThreadCpuMs(): number | null {
  if (!existsSync(schedstat)) return null;
  const ns = Number(readFileSync(schedstat, 'utf8').split(' ')[0]);
  return Number.isFinite(ns) ? ns / 1e6 : null;
}
