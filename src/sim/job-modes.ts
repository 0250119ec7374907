import { fitPerfParams } from '../goodput/fit.js';
import { optimizeBatch } from '../goodput/optimize.js';
import type { JobMode } from '../policy/policy.js';
import { findPolicy } from '../policy/registry.js';
import { memoizedFit } from './fit-memo.js';
import type { AdaptiveHooks } from './sim-job.js';

export type { JobMode };

/**
 * Job mode of a policy: the one its factory declares; unknown (unregistered) policies get the
 * adaptive, model-driven mode. In adaptive mode ncf keeps a fixed 32768 on one GPU.
 */
export function jobModeFor(policy: string): JobMode {
  return findPolicy(policy)?.job_mode ?? 'adaptive';
}

/**
 * Pollux agent emulation over goodput/: refit on all profile points (memoized by the points:
 * fit-memo.ts), §3.4 batch choice.
 */
export const polluxHooks: AdaptiveHooks = {
  fit: memoizedFit((points) => fitPerfParams(points)),
  chooseBatch: (model, num_nodes, num_replicas) => {
    const c = optimizeBatch(model, num_nodes, num_replicas, model.limits.max_batch_size);
    return { local_bsz: c.local_bsz, accum_steps: c.accum_steps };
  },
};
