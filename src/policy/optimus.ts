import type { Allocation, ClusterSnapshot, PolicyJob } from '../core/cluster.js';
import { fixedBatchChoice } from '../goodput/optimize.js';
import { stepTime_s } from '../goodput/throughput.js';
import type { Policy, PolicyDecision, PolicyFactory, PolicyOptions, Rejection } from './policy.js';
import { freeGpus, pinnedAllocations, allocateGreedy, totalGpus, validAllocation } from './greedy-allocation.js';

/**
 * Seconds per optimizer step of `job` on `r` replicas. Uses the driver's estimates
 * (`step_time_s_by_replicas`, the simulator's oracle) when present; else the fitted model with
 * the job's fixed batch on a packed placement; else ideal linear scaling. Undefined when the
 * estimates stop before r (the job cannot usefully grow further).
 */
function stepTime(job: PolicyJob, r: number, gpusPerNode: number): number | undefined {
  if (job.step_time_s_by_replicas) return job.step_time_s_by_replicas[r - 1];
  if (job.model && job.fixed_batch_size !== undefined) {
    const n = Math.ceil(r / gpusPerNode);
    const c = fixedBatchChoice(job.model, n, r, job.fixed_batch_size);
    return c.local_bsz >= 1 ? stepTime_s(job.model.perf, n, r, c.local_bsz, c.accum_steps) : undefined;
  }
  return 1 / r;
}

/**
 * Optimus with an oracle (pollux-spec §5.1): every job gets one GPU in job order while GPUs
 * last, then single GPUs go one at a time to the job whose remaining time drops the most
 * ((step time at r - at r+1) x remaining steps; first job on ties) until no GPU is left or no
 * job gains. A job keeps its previous allocation when its count is unchanged; the others are
 * placed greedily, smallest counts first, on the nodes with the most free GPUs. Stateless and
 * deterministic. Honours max_replicas, min_replicas (all or none) and pins non-preemptible jobs.
 */
export class OptimusPolicy implements Policy {
  readonly name = 'optimus';

  decide(snapshot: ClusterSnapshot): PolicyDecision {
    const pinned = pinnedAllocations(snapshot);
    const gpusPerNode = Math.max(1, ...snapshot.nodes.map((n) => n.gpus));
    let free = totalGpus(snapshot);
    for (const alloc of pinned.values()) free -= alloc.length;
    const rejections: Record<string, Rejection> = {};
    const minimum = (j: PolicyJob) => Math.max(1, j.min_replicas);
    const order = snapshot.jobs.filter((j) => !pinned.has(j.id)).sort((a, b) => minimum(a) - minimum(b));
    const replicas = new Map<string, number>();
    const gain = new Map<string, number>();
    const gainOf = (job: PolicyJob, r: number): number => {
      if (r + 1 > job.max_replicas || free < 1) return 0;
      const now = stepTime(job, r, gpusPerNode);
      const next = stepTime(job, r + 1, gpusPerNode);
      if (now === undefined || next === undefined) return 0;
      return (now - next) * (job.remaining_steps ?? 1);
    };
    for (const job of order) {
      const need = minimum(job);
      if (need > free || need > job.max_replicas) {
        replicas.set(job.id, 0);
        gain.set(job.id, 0);
        rejections[job.id] =
          need > job.max_replicas
            ? {
                code: 'BAD_LIMITS',
                message: `min_replicas ${job.min_replicas} exceeds max_replicas ${job.max_replicas}`,
              }
            : { code: 'NO_GPUS', message: `needs ${need} GPU(s); all GPUs went to jobs ahead of it` };
        continue;
      }
      replicas.set(job.id, need);
      free -= need;
      gain.set(job.id, gainOf(job, need));
    }
    const byId = new Map(order.map((j) => [j.id, j]));
    while (free > 0) {
      let bestId: string | undefined;
      let bestGain = 0;
      for (const [id, g] of gain) {
        if (g > bestGain) {
          bestGain = g;
          bestId = id;
        }
      }
      if (bestId === undefined) break;
      const r = replicas.get(bestId)! + 1;
      replicas.set(bestId, r);
      // The original tests "GPUs remain" before decrementing; the gain of the last GPU is moot.
      gain.set(bestId, gainOf(byId.get(bestId)!, r));
      free -= 1;
    }

    const allocations: Record<string, Allocation> = {};
    const kept: Allocation[] = [...pinned.values()];
    for (const [id, alloc] of pinned) allocations[id] = alloc;
    for (const job of order) {
      const current = snapshot.allocations[job.id];
      if (validAllocation(snapshot, current) && current.length === replicas.get(job.id)) {
        allocations[job.id] = current;
        kept.push(current);
      }
    }
    const freeByNode = freeGpus(snapshot, kept);
    const toPlace = snapshot.jobs
      .filter((j) => !pinned.has(j.id))
      .filter((j) => replicas.get(j.id)! > 0 && !allocations[j.id])
      .sort((a, b) => replicas.get(a.id)! - replicas.get(b.id)!);
    for (const job of toPlace) {
      const placed = allocateGreedy(freeByNode, replicas.get(job.id)!);
      if (placed) allocations[job.id] = placed;
      else rejections[job.id] = { code: 'NO_ROOM', message: 'no room on the nodes (some nodes are over-committed)' };
    }
    return { allocations, rejections };
  }
}

/** Registry entry of Optimus (deterministic: the seed is ignored). */
export const optimusPolicy: PolicyFactory = {
  name: 'optimus',
  job_mode: 'fixed-oracle',
  description:
    'Optimus (+oracle): greedy GPU-by-GPU allocation by marginal reduction of remaining time, fixed batch size',
  create: (_options: PolicyOptions) => new OptimusPolicy(),
};
