/** The configuration the report endpoint answers with (docs/contract.md). */
import type { JobConfig, LrRule, Measurement } from '../../core/wire.js';
import { splitFixedBatch, type LocalBatch } from '../../goodput/batch-split.js';
import { adascaleGain } from '../../goodput/efficiency.js';
import { applyInterval, measuredDistance, unmeasuredInterval, type LogInterval } from '../../goodput/interval.js';
import { fixedBatchChoice, goodputOf, optimizeBatch } from '../../goodput/optimize.js';
import type { BatchLimits, GoodputModel } from '../../goodput/types.js';
import type { GainClaim } from '../../policy/policy.js';
import type { JobRecord, StoredKeyProfile } from '../../store/types.js';
import { limitsOf, modelOf } from '../loop/snapshot.js';

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
export function configFor(
  job: JobRecord,
  latest: Measurement,
  profile?: StoredKeyProfile,
  inForce?: LocalBatch,
): JobConfig {
  return chooseConfig(job, latest, profile, inForce).config;
}

/** {@link configFor}'s answer, and whether it changes the configuration in force only for a predicted gain. */
export interface ConfigChoice {
  config: JobConfig;
  /**
   * True when the configuration in force could stay (the job has a model, no fixed batch, and
   * the configuration in force is within its limits and cap): a change is then only for a
   * predicted gain, which the caller may ask to persist (control/reports/batch-decisions.ts).
   */
  optional: boolean;
}

/** {@link configFor} with whether its change is optional. Pure. */
export function chooseConfig(
  job: JobRecord,
  latest: Measurement,
  profile?: StoredKeyProfile,
  inForce?: LocalBatch,
  rule?: LrRule,
): ConfigChoice {
  const replicas = Math.max(1, latest.num_replicas);
  const nodes = Math.max(1, Math.min(latest.num_nodes, replicas));
  const limits = limitsOf(job, profile);
  const current: LocalBatch = inForce ?? { local_bsz: latest.local_bsz, accum_steps: latest.accum_steps };
  // Until its own first fit the job keeps its configuration (the profile only corrects a fit).
  const model = job.perf ? modelOf(job, profile) : undefined;
  let chosen = current;
  let optional = false;
  if (model && job.spec.fixed_batch_size !== undefined) {
    chosen = fixedBatchChoice(model, nodes, replicas, job.spec.fixed_batch_size);
  } else if (model) {
    const best = optimizeBatch(model, nodes, replicas, batchCapOf(job, limits), true);
    const now = allowed(job, limits, replicas, current)
      ? goodputOf(model, nodes, replicas, current.local_bsz, current.accum_steps)
      : 0;
    optional = now > 0;
    // An optional change needs the lower end of its gain's interval to clear BATCH_MIN_GAIN.
    const sure = now > 0 ? batchGain(model, nodes, replicas, current, best).lo : 0;
    if (best.goodput > 0 && !(now > 0 && sure < 1 + BATCH_MIN_GAIN)) chosen = best;
  } else if (job.spec.fixed_batch_size !== undefined) {
    const split = splitFixedBatch(limits, job.spec.fixed_batch_size, replicas);
    chosen = { local_bsz: Math.max(1, split.local_bsz), accum_steps: split.accum_steps };
  }
  return { config: batchConfig(job, limits, chosen, replicas, rule), optional };
}

/**
 * The predicted goodput gain of `to` over `from` at one placement, with its 80% interval, as a
 * batch decision uses it and its event states it (docs/policy.md): the model's ratio, capped at
 * what the throughput model can show for the change, then times the interval of the fit's
 * residuals widened for batches not measured (goodput/interval.ts; none without a measured
 * correction). The cap: at a fixed replica count and accumulation, samples/s grow at most as the batch and statistical efficiency
 * falls as it grows, so a change of the total batch by a factor rho gains at most rho, times
 * (a + 1)/(a' + 1) when it also cuts accumulation steps (fewer micro-steps' fixed costs). A
 * larger ratio is an artefact of corrections measured at a few batches (x5.34 for an 8% change
 * was seen on a busy host). Pure.
 */
export function batchGain(
  model: GoodputModel,
  nodes: number,
  replicas: number,
  from: LocalBatch,
  to: LocalBatch,
): GainClaim {
  const g0 = goodputOf(model, nodes, replicas, from.local_bsz, from.accum_steps);
  const g1 = goodputOf(model, nodes, replicas, to.local_bsz, to.accum_steps);
  const total = (b: LocalBatch): number => b.local_bsz * (b.accum_steps + 1);
  const rho = Math.max(total(to) / total(from), total(from) / total(to));
  const cap = rho * Math.max(1, (from.accum_steps + 1) / (to.accum_steps + 1));
  const gain = g0 > 0 ? Math.min(g1 / g0, cap) : 0;
  const [lo, hi] = applyInterval(gain, batchInterval(model, nodes, replicas, from, to));
  return { gain, lo, hi: Math.min(hi, Math.max(cap, gain)) };
}

/**
 * The interval of a batch change's gain: the fit's residuals (none without a measured correction)
 * widened by how far both batches are from the configurations the job measured
 * (goodput/interval.ts measuredDistance): a batch it never ran at this placement is predicted
 * less surely than one it did. A batch larger than any measured at this placement is exploration,
 * as a size past the largest measured is for the policy: it asks BATCH_MIN_GAIN of the residuals'
 * lower end and a gain that persists (batch-decisions.ts), not the widening, or a job would never
 * leave the batch it started with.
 */
function batchInterval(
  model: GoodputModel,
  nodes: number,
  replicas: number,
  from: LocalBatch,
  to: LocalBatch,
): LogInterval {
  const c = model.correction;
  if (!c) return { lo: 0, hi: 0 };
  const shape = c.shapes.find((s) => s.num_nodes === nodes && s.num_replicas === replicas);
  const largest = shape ? Math.max(...shape.by_batch.map((b) => b.local_bsz)) : Infinity;
  const d = (b: LocalBatch): number => (b.local_bsz > largest ? 0 : measuredDistance(c, nodes, replicas, b.local_bsz));
  const distance = d(from) + d(to);
  return unmeasuredInterval(c, Number.isFinite(distance) ? distance : 0);
}

export type { LrRule };

/** The learning-rate factor of `rule` at batch scale `scale` (gain: the AdaScale gain there). */
function lrFactor(rule: LrRule, scale: number, gain: number): number {
  if (rule === 'adamscale') return Math.sqrt(gain);
  if (rule === 'linear') return scale;
  if (rule === 'sqrt') return Math.sqrt(scale);
  if (rule === 'none') return 1;
  return gain;
}

/**
 * The answer for `batch` on `replicas` replicas: its total and its learning-rate scale by the
 * script's rule (`rule`; default AdaScale, the rule of SGD; 'custom' is predicted as AdaScale).
 */
export function batchConfig(
  job: JobRecord,
  limits: BatchLimits,
  batch: LocalBatch,
  replicas: number,
  rule: LrRule = 'adascale',
): JobConfig {
  const batch_size = batch.local_bsz * replicas * (batch.accum_steps + 1);
  const scale = batch_size / limits.init_batch_size;
  const lr_scale = job.grad ? lrFactor(rule, scale, adascaleGain(job.grad, scale)) : 1;
  return { local_bsz: batch.local_bsz, accum_steps: batch.accum_steps, batch_size, lr_scale };
}

/** Whether a configuration is within the job's limits (micro-batch, accumulation) and cap. */
function allowed(job: JobRecord, limits: BatchLimits, replicas: number, batch: LocalBatch): boolean {
  if (batch.local_bsz < limits.min_local_bsz || batch.local_bsz > limits.max_local_bsz) return false;
  if (!limits.accumulation && batch.accum_steps > 0) return false;
  return batch.local_bsz * replicas * (batch.accum_steps + 1) <= batchCapOf(job, limits);
}
