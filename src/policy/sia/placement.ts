/**
 * Where the typed policies put the GPUs of each chosen configuration on the nodes of its type:
 * Sia's fast placement and the sticky one of the goodput policy. Pure.
 */
import type { Allocation } from '../../core/cluster.js';
import type { TypeGroup } from '../typed.js';
/**
 * Sia's fast placement on one type: jobs by GPU count, largest first; whole nodes for the
 * whole-node part, then the rest on the next nodes with free GPUs, continuing round-robin.
 */
export function placeFast(
  group: TypeGroup,
  jobs: readonly { id: string; gpus: number }[],
  nodeGpus: readonly number[],
): Record<string, Allocation> {
  const free = group.nodes.map((n) => nodeGpus[n]!);
  const m = free.length;
  const g = group.gpus_per_node;
  const out: Record<string, Allocation> = {};
  let cursor = 0;
  for (const job of [...jobs].sort((a, b) => b.gpus - a.gpus)) {
    let left = job.gpus;
    let node = cursor;
    let full = Math.floor(left / g);
    const placed: number[] = [];
    for (let checked = 0; checked < m && full > 0; checked++) {
      if (free[node] === g) {
        free[node] = 0;
        left -= g;
        for (let k = 0; k < g; k++) placed.push(group.nodes[node]!);
        full--;
      }
      node = (node + 1) % m;
    }
    for (let guard = 0; left > 0 && guard < 2 * m; guard++) {
      const take = Math.min(left, free[node]!);
      if (take > 0) {
        free[node]! -= take;
        left -= take;
        for (let k = 0; k < take; k++) placed.push(group.nodes[node]!);
      }
      node = (node + 1) % m;
    }
    if (left === 0) out[job.id] = placed;
    cursor = node;
  }
  return out;
}

/**
 * Placement that keeps every job whose GPU count on this type is unchanged on its nodes, then
 * packs the others: whole free nodes first for multi-node jobs, else the node with the fewest
 * free GPUs that fits (best fit), else any free GPUs.
 */
export function placeSticky(
  group: TypeGroup,
  jobs: readonly { id: string; gpus: number }[],
  nodeGpus: readonly number[],
  current: Readonly<Record<string, Allocation>>,
): Record<string, Allocation> {
  // Free GPUs by node index; -1 for nodes of other types. Arrays, not maps, and scans, not
  // sorts: at 16,384 GPUs this runs for thousands of jobs over hundreds of nodes (issue #49).
  const free = new Int32Array(nodeGpus.length).fill(-1);
  for (const n of group.nodes) free[n] = nodeGpus[n]!;
  const need = new Int32Array(nodeGpus.length);
  const out: Record<string, Allocation> = {};
  const rest: { id: string; gpus: number }[] = [];
  for (const job of jobs) {
    const prev = current[job.id];
    if (prev && prev.length === job.gpus && prev.every((n) => free[n]! >= 0)) {
      for (const n of prev) need[n]!++;
      const fits = prev.every((n) => free[n]! >= need[n]!);
      if (fits) for (const n of prev) free[n]!--;
      for (const n of prev) need[n] = 0;
      if (fits) {
        out[job.id] = prev;
        continue;
      }
    }
    rest.push(job);
  }
  const g = group.gpus_per_node;
  // Indexed loops over the nodes: a scan per job, the first ones before the JIT compiles this,
  // where for...of allocates a result per node (issue #49).
  const nodes = group.nodes;
  for (const job of rest.sort((a, b) => b.gpus - a.gpus)) {
    const placed: number[] = [];
    let left = job.gpus;
    if (left >= g) {
      for (let i = 0; i < nodes.length && left >= g; i++) {
        const n = nodes[i]!;
        if (free[n] === g) {
          free[n] = 0;
          for (let k = 0; k < g; k++) placed.push(n);
          left -= g;
        }
      }
    }
    if (left > 0) {
      // Best fit: the node with the fewest free GPUs that holds the rest, first in group order.
      let fit = -1;
      for (let i = 0; i < nodes.length; i++) {
        const n = nodes[i]!;
        if (free[n]! >= left && (fit < 0 || free[n]! < free[fit]!)) fit = n;
      }
      const order = fit >= 0 ? [fit] : [...group.nodes].sort((a, b) => free[b]! - free[a]!);
      for (const n of order) {
        const take = Math.min(left, free[n]!);
        free[n]! -= take;
        for (let k = 0; k < take; k++) placed.push(n);
        left -= take;
        if (left === 0) break;
      }
    }
    if (left === 0) out[job.id] = placed;
    else for (const n of placed) free[n]!++;
  }
  return out;
}
