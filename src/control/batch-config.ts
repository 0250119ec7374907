/** The configuration the report endpoint answers with (docs/contract.md). */
import type { JobConfig, Measurement } from '../core/wire.js';
import { splitFixedBatch, type LocalBatch } from '../goodput/batch-split.js';
import { adascaleGain } from '../goodput/efficiency.js';
import { fixedBatchChoice, goodputOf, optimizeBatch } from '../goodput/optimize.js';
import type { BatchLimits, GoodputModel } from '../goodput/types.js';
import type { JobRecord, StoredKeyProfile } from '../store/types.js';
import { limitsOf, modelOf } from './snapshot.js';

// Re-exported for the controller, which answers reports with it.
export type { JobConfig };

/**
 * Smallest predicted goodput gain (as a fraction of the goodput of the batch in force) for which
 * a job is told to change its batch size. Near its optimum a job's goodput curve is flat, and
 * each refit of its model, or a new measurement correcting it, moves the optimum a little: told
 * every best batch, a job would change its batch (and its learning-rate scale) every round for a
 * gain below the model's own error. A fixed batch, or a batch in force that is no longer allowed
 * (beyond the job's limits or cap), changes without it.
 */
export const BATCH_MIN_GAIN = 0.05;

/**
 * The largest total batch the job may be told: the script's `max_batch_size` (its limits) and
 * the spec's `batch_size_cap`, whichever is smaller, and at least the initial batch size.
 */
export function batchCapOf(job: JobRecord, limits: BatchLimits): number {
  const cap = Math.min(limits.max_batch_size, job.spec.batch_size_cap ?? Infinity);
  return Math.max(limits.init_batch_size, cap);
}

/**
 * Best configuration for the job's current placement (taken from its latest measurement):
 * goodput-optimal within the job's cap ({@link batchCapOf}) when the model is fitted, the fixed
 * batch when the spec sets one (split by the one batch rule, goodput/batch-split.ts, also before
 * a model exists), otherwise the configuration in force. `profile`: the key's profile the job's
 * model uses (corrections, as in the scheduling round). `inForce`: the configuration the job was
 * last told at this placement (default: the one it measured); it is kept unless the best one is
 * predicted to gain at least {@link BATCH_MIN_GAIN} over it. Pure.
 */
export function configFor(job: JobRecord, latest: Measurement, profile?: StoredKeyProfile, inForce?: LocalBatch): JobConfig {
  const replicas = Math.max(1, latest.num_replicas);
  const nodes = Math.max(1, Math.min(latest.num_nodes, replicas));
  const limits = limitsOf(job, profile);
  const current: LocalBatch = inForce ?? { local_bsz: latest.local_bsz, accum_steps: latest.accum_steps };
  // Until its own first fit the job keeps its configuration (the profile only corrects a fit).
  const model = job.perf ? modelOf(job, profile) : undefined;
  let { local_bsz, accum_steps } = current;
  if (model && job.spec.fixed_batch_size !== undefined) {
    ({ local_bsz, accum_steps } = fixedBatchChoice(model, nodes, replicas, job.spec.fixed_batch_size));
  } else if (model) {
    const choice = optimizeBatch(model, nodes, replicas, batchCapOf(job, limits), true);
    if (choice.goodput > 0 && !keeps(model, job, nodes, replicas, current, choice.goodput)) ({ local_bsz, accum_steps } = choice);
  } else if (job.spec.fixed_batch_size !== undefined) {
    ({ local_bsz, accum_steps } = splitFixedBatch(limits, job.spec.fixed_batch_size, replicas));
    local_bsz = Math.max(1, local_bsz);
  }
  const batch_size = local_bsz * replicas * (accum_steps + 1);
  const lr_scale = job.grad ? adascaleGain(job.grad, batch_size / limits.init_batch_size) : 1;
  return { local_bsz, accum_steps, batch_size, lr_scale };
}

/**
 * Whether the configuration in force stays: it is allowed (micro-batch within the limits, total
 * within the cap) and the best one's predicted goodput `best` is less than
 * (1 + BATCH_MIN_GAIN) times its own.
 */
function keeps(model: GoodputModel, job: JobRecord, nodes: number, replicas: number, current: LocalBatch, best: number): boolean {
  const limits = model.limits;
  const total = current.local_bsz * replicas * (current.accum_steps + 1);
  if (current.local_bsz < limits.min_local_bsz || current.local_bsz > limits.max_local_bsz || total > batchCapOf(job, limits)) return false;
  if (!limits.accumulation && current.accum_steps > 0) return false;
  const now = goodputOf(model, nodes, replicas, current.local_bsz, current.accum_steps);
  return now > 0 && best < now * (1 + BATCH_MIN_GAIN);
}
