import { fitPerfParams } from '../goodput/fit.js';
import { optimizeBatch } from '../goodput/optimize.js';
import type { AdaptiveHooks } from './sim-job.js';

/**
 * How the simulator tunes a workload's jobs for a policy ("TunedJobs", pollux-spec §1.7-1.8):
 * - `gang`: all-or-nothing on the CSV GPU count with the CSV total batch (Tiresias, FIFO);
 * - `fixed-oracle`: CSV total batch, replica count chosen by the policy, with Optimus' oracle
 *   remaining-steps and step-time estimates computed from the true traces;
 * - `adaptive`: Pollux-style: batch size chosen from the job's fitted goodput model (ncf keeps a
 *   fixed 32768 on one GPU), models exposed to the policy.
 */
export type JobMode = 'gang' | 'fixed-oracle' | 'adaptive';

const modes: Readonly<Record<string, JobMode>> = {
  fifo: 'gang',
  tiresias: 'gang',
  optimus: 'fixed-oracle',
  pollux: 'adaptive',
  goodput: 'adaptive',
};

/** Job mode for a policy name; unknown (future) policies get the adaptive, model-driven mode. */
export function jobModeFor(policy: string): JobMode {
  return modes[policy] ?? 'adaptive';
}

/** Pollux agent emulation over goodput/: refit on all profile points, §3.4 batch choice. */
export const polluxHooks: AdaptiveHooks = {
  fit: (points) => fitPerfParams(points),
  chooseBatch: (model, num_nodes, num_replicas) => {
    const c = optimizeBatch(model, num_nodes, num_replicas, model.limits.max_batch_size);
    return { local_bsz: c.local_bsz, accum_steps: c.accum_steps };
  },
};
