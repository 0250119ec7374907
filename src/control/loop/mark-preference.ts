/**
 * The preference for unmarked nodes (control/ranks/device-health.ts, typed-nodes.ts) made explicit
 * for placements that do not follow node order. Pure.
 */
import { gpuTypeOf, type NodeInfo } from '../../core/cluster.js';
import { sameAllocation } from './device-binding.js';

/**
 * `decided` with each new placement on a marked node moved to an equal unmarked node (same GPU
 * type, same usable devices) that no other job holds or is given, the job's own held nodes first:
 * the queue-based and goodput placements take the earlier of equal nodes, and the policy's nodes
 * list the marked ones last, but a search that is symmetric between equal nodes (Pollux's genetic
 * search) may still pick a marked one. A move is between equal nodes free of other work, so it
 * never changes what fits or what another job gets; it only redirects replicas the policy put on
 * a marked node the job did not hold (a job the policy keeps in place is never moved by it), and
 * with no marked node it answers `decided` itself, so a cluster without marks is decided on as the policy decided.
 *
 * @param marked per policy node, whether devices of it are marked.
 * @param held per job, its allocation on the policy's nodes now.
 */
export function avoidMarkedNodes(
  nodes: readonly NodeInfo[],
  marked: readonly boolean[],
  held: Readonly<Record<string, readonly number[]>>,
  decided: Readonly<Record<string, readonly number[]>>,
): Readonly<Record<string, readonly number[]>> {
  if (!marked.some((m) => m)) return decided;
  const users = new Map<number, Set<string>>();
  const use = (node: number, id: string) => {
    const set = users.get(node) ?? new Set<string>();
    users.set(node, set.add(id));
  };
  for (const record of [held, decided])
    for (const [id, allocation] of Object.entries(record)) for (const n of allocation) use(n, id);
  const equal = (a: NodeInfo, b: NodeInfo) => gpuTypeOf(a) === gpuTypeOf(b) && a.gpus === b.gpus;
  const out: Record<string, readonly number[]> = {};
  for (const [id, allocation] of Object.entries(decided)) {
    const before = held[id] ?? [];
    let moved = allocation;
    if (!sameAllocation(allocation, before)) {
      for (const g of new Set(allocation)) {
        if (!marked[g] || before.includes(g)) continue;
        const free = (i: number) =>
          !marked[i] &&
          !moved.includes(i) &&
          [...(users.get(i) ?? [])].every((u) => u === id) &&
          equal(nodes[i]!, nodes[g]!);
        // Back to a node the job holds before any other: a search that moves it there is kept home.
        const h = before.find(free) ?? nodes.findIndex((_, i) => free(i));
        if (h < 0) continue;
        use(h, id);
        moved = moved.map((n) => (n === g ? h : n));
      }
    }
    out[id] = moved;
  }
  return out;
}
