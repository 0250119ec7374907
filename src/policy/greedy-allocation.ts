import type { Allocation, ClusterSnapshot } from '../core/cluster.js';

/**
 * Shared allocation helpers (node index per replica, core's `Allocation`) of the queue-based
 * baselines (FIFO, Tiresias, Optimus). Pure.
 */

/** Total GPUs of the cluster. */
export function totalGpus(snapshot: ClusterSnapshot): number {
  return snapshot.nodes.reduce((s, n) => s + n.gpus, 0);
}

/** Whether every replica of `alloc` names an existing node. */
export function validAllocation(snapshot: ClusterSnapshot, alloc: Allocation | undefined): alloc is Allocation {
  return !!alloc && alloc.length > 0 && alloc.every((n) => Number.isInteger(n) && n >= 0 && n < snapshot.nodes.length);
}

/** Free GPUs per node once `kept` allocations are subtracted (may go negative if nodes shrank). */
export function freeGpus(snapshot: ClusterSnapshot, kept: Iterable<Allocation>): number[] {
  const free = snapshot.nodes.map((n) => n.gpus);
  for (const alloc of kept) for (const n of alloc) free[n]! -= 1;
  return free;
}

/**
 * Places `count` one-GPU replicas greedily: repeatedly on the node with the most free GPUs (ties:
 * lowest index), taking as many as fit there. Decrements `free`. Returns undefined (and leaves
 * `free` untouched) when fewer than `count` GPUs are free.
 */
export function allocateGreedy(free: number[], count: number): number[] | undefined {
  let available = 0;
  for (const f of free) if (f > 0) available += f;
  if (available < count) return undefined;
  const alloc: number[] = [];
  while (alloc.length < count) {
    let best = -1;
    for (let i = 0; i < free.length; i++) if (free[i]! > 0 && (best < 0 || free[i]! > free[best]!)) best = i;
    const take = Math.min(free[best]!, count - alloc.length);
    for (let k = 0; k < take; k++) alloc.push(best);
    free[best]! -= take;
  }
  return alloc;
}

/**
 * Allocations of non-preemptible jobs that already hold GPUs: they are pinned and must be kept
 * unchanged (Policy contract). Keyed by job id.
 */
export function pinnedAllocations(snapshot: ClusterSnapshot): Map<string, Allocation> {
  const pinned = new Map<string, Allocation>();
  for (const job of snapshot.jobs) {
    const alloc = snapshot.allocations[job.id];
    if (!job.preemptible && validAllocation(snapshot, alloc)) pinned.set(job.id, alloc);
  }
  return pinned;
}
