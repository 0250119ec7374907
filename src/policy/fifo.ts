import type { Allocation, ClusterSnapshot } from '../core/cluster.js';
import type { Policy, PolicyDecision, PolicyFactory, PolicyOptions, Rejection } from './policy.js';
import { freeGpus, allocateGreedy, totalGpus, validAllocation } from './greedy-allocation.js';
import { gangSize } from './tiresias.js';

/**
 * Strict first-in-first-out with all-or-nothing gangs: jobs start in submission order (ties:
 * snapshot order), each on its gang size (see `gangSize`), and run to completion without
 * preemption. The first job that does not fit blocks every later one (no backfilling), which
 * is what makes FIFO the simple baseline. Stateless; placement as Tiresias (most free GPUs first).
 */
export class FifoPolicy implements Policy {
  readonly name = 'fifo';

  decide(snapshot: ClusterSnapshot): PolicyDecision {
    const clusterGpus = totalGpus(snapshot);
    const allocations: Record<string, Allocation> = {};
    const rejections: Record<string, Rejection> = {};
    const kept: Allocation[] = [];
    for (const job of snapshot.jobs) {
      const current = snapshot.allocations[job.id];
      if (validAllocation(snapshot, current)) {
        allocations[job.id] = current;
        kept.push(current);
      }
    }
    const free = freeGpus(snapshot, kept);
    const waiting = snapshot.jobs
      .map((job, index) => ({ job, index }))
      .filter(({ job }) => !allocations[job.id])
      .sort((a, b) => a.job.submitted_at_s - b.job.submitted_at_s || a.index - b.index);
    let blocked: string | undefined;
    for (const { job } of waiting) {
      const gang = gangSize(job, clusterGpus);
      const placed = blocked === undefined && gang <= clusterGpus ? allocateGreedy(free, gang) : undefined;
      if (placed) {
        allocations[job.id] = placed;
        continue;
      }
      if (gang > clusterGpus)
        rejections[job.id] = {
          code: 'TOO_LARGE',
          message: `needs ${gang} GPUs at once; the cluster has ${clusterGpus}`,
        };
      else {
        rejections[job.id] =
          blocked === undefined
            ? { code: 'QUEUED', message: `head of the queue, waiting for ${gang} free GPUs` }
            : { code: 'QUEUED', message: `waiting behind ${blocked} (first in, first out)` };
        blocked ??= job.id;
      }
    }
    return { allocations, rejections };
  }
}

/** Registry entry of FIFO (deterministic: the seed is ignored). */
export const fifoPolicy: PolicyFactory = {
  name: 'fifo',
  job_mode: 'gang',
  description: 'FIFO: strict first-come first-served, all-or-nothing gangs of the requested size, no preemption',
  create: (_options: PolicyOptions) => new FifoPolicy(),
};
