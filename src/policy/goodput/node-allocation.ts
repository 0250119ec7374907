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
  const distributed = spansNodes(allocation);
  // Indexed loops here and below: thousands of calls a round, the first ones before the JIT
  // compiles them, where an iterator allocates a result per element.
  for (let k = 0; k < allocation.length; k++) {
    const node = allocation[k]!;
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
 * Mutates `usage`; returns allocations by job id (jobs with 0 replicas are absent). With `got`
 * (indexed like `views`, zeros), also writes each job's replica count there: callers that walk
 * the views again read it instead of looking up thousands of job ids.
 */
export function allocateJobs(
  views: readonly RoundJob[],
  counts: readonly number[],
  usage: NodeUsage,
  got?: Int32Array,
): Record<string, Allocation> {
  const result: Record<string, Allocation> = {};
  const toPlace: number[] = [];
  for (let i = 0; i < views.length; i++) {
    const view = views[i]!;
    const count = counts[i] as number;
    if (count <= 0) continue;
    if (count === view.current_replicas && fits(usage, view.current)) {
      occupy(usage, view.current);
      result[view.job.id] = view.current;
      if (got) got[i] = view.current.length;
    } else {
      toPlace.push(i);
    }
  }
  toPlace.sort(
    (a, b) =>
      (counts[b] as number) - (counts[a] as number) ||
      (views[b] as RoundJob).weight - (views[a] as RoundJob).weight ||
      a - b,
  );
  const index = new FreeIndex(usage.free);
  for (let t = 0; t < toPlace.length; t++) {
    const i = toPlace[t]!;
    const view = views[i] as RoundJob;
    const allocation = placeOne(usage, counts[i] as number, view.min_replicas, index);
    if (allocation.length > 0) {
      occupy(usage, allocation);
      // Each node once (the allocation is sorted: a node's replicas are adjacent).
      for (let k = 0; k < allocation.length; k++)
        if (k === 0 || allocation[k] !== allocation[k - 1]) index.update(allocation[k]!);
      result[view.job.id] = allocation;
      if (got) got[i] = allocation.length;
    }
  }
  return result;
}

/**
 * Nodes by free GPUs, for a best fit in time independent of the node count (thousands of nodes,
 * issue #49): per free count, a min-heap of node indices, stale entries dropped when seen.
 * `bestFit` returns what a scan in node order returns: the first node with the fewest free GPUs
 * that still holds `replicas`.
 */
class FreeIndex {
  private readonly buckets: number[][] = [];

  constructor(private readonly free: readonly number[]) {
    for (let node = 0; node < free.length; node++) this.update(node);
  }

  /** Records the node's current free count (call after it changes). */
  update(node: number): void {
    const f = this.free[node] as number;
    if (f <= 0) return;
    while (this.buckets.length <= f) this.buckets.push([]);
    heapPush(this.buckets[f] as number[], node);
  }

  /** The largest free count of any node (0: no node has a free GPU). */
  largestFree(): number {
    for (let f = this.buckets.length - 1; f > 0; f--) {
      const heap = this.buckets[f] as number[];
      while (heap.length > 0 && this.free[heap[0] as number] !== f) heapPop(heap);
      if (heap.length > 0) return f;
    }
    return 0;
  }

  /**
   * The nodes with exactly `f` free GPUs, ascending: the bucket's entries sorted natively, stale
   * and repeated ones dropped (a scan of every node per free count was, at 2,048 GPUs, a tenth of
   * the first round: issue #49).
   */
  nodesWithFree(f: number): Int32Array {
    const heap = this.buckets[f];
    if (!heap || heap.length === 0) return new Int32Array(0);
    const sorted = Int32Array.from(heap).sort();
    let n = 0;
    for (let k = 0; k < sorted.length; k++) {
      const node = sorted[k]!;
      if (this.free[node] === f && (n === 0 || sorted[n - 1] !== node)) sorted[n++] = node;
    }
    return sorted.subarray(0, n);
  }

  bestFit(replicas: number): number | undefined {
    for (let f = Math.max(1, replicas); f < this.buckets.length; f++) {
      const heap = this.buckets[f] as number[];
      while (heap.length > 0 && this.free[heap[0] as number] !== f) heapPop(heap);
      if (heap.length > 0) return heap[0];
    }
    return undefined;
  }
}

function heapPush(heap: number[], x: number): void {
  heap.push(x);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as number) <= x) break;
    heap[i] = heap[parent] as number;
    i = parent;
  }
  heap[i] = x;
}

function heapPop(heap: number[]): void {
  const last = heap.pop() as number;
  if (heap.length === 0) return;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && (heap[right] as number) < (heap[left] as number) ? right : left;
    if ((heap[child] as number) >= last) break;
    heap[i] = heap[child] as number;
    i = child;
  }
  heap[i] = last;
}

/** Whether the allocation's replicas are on more than one node. */
function spansNodes(allocation: Allocation): boolean {
  for (let k = 1; k < allocation.length; k++) if (allocation[k] !== allocation[0]) return true;
  return false;
}

function fits(usage: NodeUsage, allocation: Allocation): boolean {
  if (allocation.length === 0) return false;
  if (!spansNodes(allocation)) {
    // One node (most jobs): no count per node to make.
    const free = usage.free[allocation[0]!];
    return free !== undefined && free >= allocation.length;
  }
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

function placeOne(usage: NodeUsage, replicas: number, min_replicas: number, index: FreeIndex): Allocation {
  const single = index.bestFit(replicas);
  if (single !== undefined) return new Array<number>(replicas).fill(single);
  // The clean nodes (free GPUs, no other multi-node job) by free GPUs descending, then node
  // index: from the index's buckets, not a sort of objects for every node (thousands, issue #49).
  const allocation: number[] = [];
  const most = index.largestFree();
  for (let f = most; f > 0 && allocation.length < replicas; f--) {
    const nodes = index.nodesWithFree(f);
    for (let k = 0; k < nodes.length && allocation.length < replicas; k++) {
      const node = nodes[k]!;
      if (usage.hosts_distributed[node]) continue;
      const take = Math.min(f, replicas - allocation.length);
      for (let j = 0; j < take; j++) allocation.push(node);
    }
  }
  allocation.sort((a, b) => a - b);
  if (allocation.length === replicas) return allocation;
  // Not enough clean capacity: shrink to the larger of the best single node and the clean nodes.
  const shrunk = Math.max(most, allocation.length);
  if (shrunk < Math.max(1, min_replicas)) return [];
  return shrunk === allocation.length ? allocation : placeOne(usage, shrunk, min_replicas, index);
}
