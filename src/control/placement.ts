/** Turning a policy's allocations (node index per replica) into concrete device indices. */
import { validateDecision } from '../policy/validate-decision.js';
import type { JobRecord } from '../store/types.js';
import { holdsDevices } from './snapshot.js';

/** Whether two allocations are the same list. */
export function sameAllocation(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Result of `assignDevices`: devices per job with a non-empty allocation, or why not. */
export type DeviceAssignment = { ok: true; devices: Map<string, number[]> } | { ok: false; reason: string };

/**
 * Assigns device indices (single node) so that jobs keep the devices they hold as far as their
 * new replica count allows, and growing jobs take free devices in index order. Never gives a
 * device to two jobs; refuses a decision that fails validateDecision (a job not in `jobs`, a node
 * other than 0, over-commit of the node's `devices`). Pure.
 */
export function assignDevices(jobs: readonly JobRecord[], allocations: Record<string, readonly number[]>, devices: readonly number[]): DeviceAssignment {
  const check = validateDecision({ nodes: [{ gpus: devices.length }], jobs }, allocations);
  if (!check.ok) return check;
  const wanted = new Map<string, number>();
  for (const job of jobs) {
    const n = allocations[job.id]?.length ?? 0;
    if (n > 0) wanted.set(job.id, n);
  }
  const valid = new Set(devices);
  const taken = new Set<number>();
  const out = new Map<string, number[]>();
  for (const job of jobs) {
    const n = wanted.get(job.id);
    if (n === undefined) continue;
    const keep = holdsDevices(job) ? job.devices.filter((d) => valid.has(d) && !taken.has(d)).slice(0, n) : [];
    for (const d of keep) taken.add(d);
    out.set(job.id, keep);
  }
  for (const job of jobs) {
    const n = wanted.get(job.id);
    if (n === undefined) continue;
    const list = out.get(job.id)!;
    for (const d of devices) {
      if (list.length >= n) break;
      if (!taken.has(d)) {
        taken.add(d);
        list.push(d);
      }
    }
  }
  return { ok: true, devices: out };
}
