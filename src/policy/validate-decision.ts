/**
 * The one check of a policy's output, run by every caller (simulator, control plane, conformance
 * suite) instead of each re-deriving it: the framework validates a plugin's decision once.
 */
import { gpuTypeOf, type Allocation, type NodeInfo, type PolicyJob } from '../core/cluster.js';

/** Outcome of {@link validateDecision}: a rejection is a value with a reason. */
export type DecisionCheck = { ok: true } | { ok: false; reason: string };

/** What the check needs of a snapshot: node capacities (by index) and the job ids. */
export interface DecisionScope {
  nodes: readonly Pick<NodeInfo, 'gpus' | 'gpu_type'>[];
  jobs: readonly Pick<PolicyJob, 'id'>[];
}

/**
 * Checks the invariants every decision must hold: each allocated job is in the snapshot, each
 * replica is on a known node (integer index in range), a job's replicas are on nodes of one GPU
 * type (the slowest device would pace every step), and no node gets more replicas than it has
 * GPUs. Reports the first violation found, in allocation order. Pure.
 */
export function validateDecision(
  scope: DecisionScope,
  allocations: Readonly<Record<string, Allocation>>,
): DecisionCheck {
  const ids = new Set(scope.jobs.map((j) => j.id));
  const used = new Array<number>(scope.nodes.length).fill(0);
  for (const [id, alloc] of Object.entries(allocations)) {
    if (alloc.length > 0 && !ids.has(id))
      return { ok: false, reason: `job ${id} is not in the snapshot but got an allocation` };
    for (const node of alloc) {
      if (!Number.isInteger(node) || node < 0 || node >= scope.nodes.length)
        return { ok: false, reason: `job ${id} allocated to unknown node ${node}` };
      used[node]! += 1;
    }
    if (alloc.length > 1) {
      const type = gpuTypeOf(scope.nodes[alloc[0]!]!);
      if (alloc.some((n) => gpuTypeOf(scope.nodes[n]!) !== type))
        return {
          ok: false,
          reason: `job ${id} spans GPU types (${[...new Set(alloc.map((n) => gpuTypeOf(scope.nodes[n]!)))].join(', ')})`,
        };
    }
  }
  for (let i = 0; i < used.length; i++) {
    const gpus = scope.nodes[i]!.gpus;
    if (used[i]! > gpus) return { ok: false, reason: `node ${i} over-committed (${used[i]} > ${gpus} GPUs)` };
  }
  return { ok: true };
}
