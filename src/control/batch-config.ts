/** The configuration the report endpoint answers with (docs/contract.md). */
import type { JobConfig, Measurement } from '../core/wire.js';
import { splitFixedBatch } from '../goodput/batch-split.js';
import { adascaleGain } from '../goodput/efficiency.js';
import { fixedBatchChoice, optimizeBatch } from '../goodput/optimize.js';
import type { JobRecord, StoredKeyProfile } from '../store/types.js';
import { limitsOf, modelOf } from './snapshot.js';

// Re-exported for the controller, which answers reports with it.
export type { JobConfig };

/**
 * Best configuration for the job's current placement (taken from its latest measurement):
 * goodput-optimal when the model is fitted, the fixed batch when the spec sets one (split by the
 * one batch rule, goodput/batch-split.ts, also before a model exists), otherwise the job's own
 * current configuration. `profile`: the key's profile the job's model uses (corrections, as in
 * the scheduling round). Pure.
 */
export function configFor(job: JobRecord, latest: Measurement, profile?: StoredKeyProfile): JobConfig {
  const replicas = Math.max(1, latest.num_replicas);
  const nodes = Math.max(1, Math.min(latest.num_nodes, replicas));
  const limits = limitsOf(job, profile);
  // Until its own first fit the job keeps its configuration (the profile only corrects a fit).
  const model = job.perf ? modelOf(job, profile) : undefined;
  let local_bsz = latest.local_bsz;
  let accum_steps = latest.accum_steps;
  if (model && job.spec.fixed_batch_size !== undefined) {
    ({ local_bsz, accum_steps } = fixedBatchChoice(model, nodes, replicas, job.spec.fixed_batch_size));
  } else if (model) {
    const choice = optimizeBatch(model, nodes, replicas, job.spec.batch_size_cap);
    if (choice.goodput > 0) ({ local_bsz, accum_steps } = choice);
  } else if (job.spec.fixed_batch_size !== undefined) {
    ({ local_bsz, accum_steps } = splitFixedBatch(limits, job.spec.fixed_batch_size, replicas));
    local_bsz = Math.max(1, local_bsz);
  }
  const batch_size = local_bsz * replicas * (accum_steps + 1);
  const lr_scale = job.grad ? adascaleGain(job.grad, batch_size / limits.init_batch_size) : 1;
  return { local_bsz, accum_steps, batch_size, lr_scale };
}
