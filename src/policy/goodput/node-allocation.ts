import type { Allocation, NodeInfo } from '../../core/cluster.js';
import type { RoundJob } from './job-view.js';

/** Free GPUs per node and which nodes already host a job that spans several nodes. */
export interface NodeUsage {
  free: number[];
  hosts_distributed: boolean[];
}

/** Usage of the nodes after the given allocations (which must fit; pinned jobs). */
export function usageAfter(nodes: readonly NodeInfo[], fixed: Iterable<Allocation>): NodeUsage {
  const free = nodes.map((n) => n.gpus);
  const hosts_distributed = nodes.map(() => false);
  for (const allocation of fixed) occupy({ free, hosts_distributed }, allocation);
  return { free, hosts_distributed };
}

function occupy(usage: NodeUsage, allocation: Allocation): void {
  const distributed = new Set(allocation).size > 1;
  for (const node of allocation) {
    usage.free[node] = (usage.free[node] as number) - 1;
    if (distributed) usage.hosts_distributed[node] = true;
  }
}

/**
 * Turns replica counts into node lists. Jobs whose count did not change keep their allocation
 * (no restart). The others are placed largest first: on one node when one fits (best fit, to keep
 * big holes for big jobs), else across the emptiest nodes that host no other multi-node job, so
 * distributed jobs never share a node's network link. A job that cannot be placed with its count
 * is shrunk to what fits, and gets nothing if that is below its min_replicas.
 * Mutates `usage`; returns allocations by job id (jobs with 0 replicas are absent).
 */
export function allocateJobs(
  views: readonly RoundJob[],
  counts: readonly number[],
  usage: NodeUsage,
): Record<string, Allocation> {
  const result: Record<string, Allocation> = {};
  const toPlace: number[] = [];
  views.forEach((view, i) => {
    const count = counts[i] as number;
    if (count <= 0) return;
    if (count === view.current_replicas && fits(usage, view.current)) {
      occupy(usage, view.current);
      result[view.job.id] = view.current;
    } else {
      toPlace.push(i);
    }
  });
  toPlace.sort(
    (a, b) =>
      (counts[b] as number) - (counts[a] as number) ||
      (views[b] as RoundJob).weight - (views[a] as RoundJob).weight ||
      a - b,
  );
  for (const i of toPlace) {
    const view = views[i] as RoundJob;
    const allocation = placeOne(usage, counts[i] as number, view.min_replicas);
    if (allocation.length > 0) {
      occupy(usage, allocation);
      result[view.job.id] = allocation;
    }
  }
  return result;
}

function fits(usage: NodeUsage, allocation: Allocation): boolean {
  if (allocation.length === 0) return false;
  const need = new Map<number, number>();
  for (const node of allocation) need.set(node, (need.get(node) ?? 0) + 1);
  const distributed = need.size > 1;
  for (const [node, replicas] of need) {
    const free = usage.free[node];
    if (free === undefined || free < replicas) return false;
    if (distributed && usage.hosts_distributed[node]) return false;
  }
  return true;
}

function placeOne(usage: NodeUsage, replicas: number, min_replicas: number): Allocation {
  const single = bestFitNode(usage, replicas);
  if (single !== undefined) return new Array<number>(replicas).fill(single);
  const clean = usage.free
    .map((free, node) => ({ free, node }))
    .filter((n) => n.free > 0 && !usage.hosts_distributed[n.node])
    .sort((a, b) => b.free - a.free || a.node - b.node);
  const allocation: number[] = [];
  for (const { free, node } of clean) {
    const take = Math.min(free, replicas - allocation.length);
    for (let k = 0; k < take; k++) allocation.push(node);
    if (allocation.length === replicas) break;
  }
  allocation.sort((a, b) => a - b);
  if (allocation.length === replicas) return allocation;
  // Not enough clean capacity: shrink to the larger of the best single node and the clean nodes.
  const largestSingle = Math.max(0, ...usage.free);
  const shrunk = Math.max(largestSingle, allocation.length);
  if (shrunk < Math.max(1, min_replicas)) return [];
  return shrunk === allocation.length ? allocation : placeOne(usage, shrunk, min_replicas);
}

function bestFitNode(usage: NodeUsage, replicas: number): number | undefined {
  let best: number | undefined;
  usage.free.forEach((free, node) => {
    if (free >= replicas && (best === undefined || free < (usage.free[best] as number))) best = node;
  });
  return best;
}
