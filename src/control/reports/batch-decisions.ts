/**
 * Batch-size decisions of running jobs: which configuration is in force, what each report is
 * answered with (a change needs a predicted gain that persists), and the event that records a
 * change, in words. The configuration in force is the
 * one the job was last told at its current attempt and replica count (a job applies an answer at
 * its next step, so its reports meanwhile still show the old one), else the one it measured.
 */
import type { LocalBatch } from '../../goodput/batch-split.js';
import { efficiency } from '../../goodput/efficiency.js';
import type { JobRecord, Measurement, StoredKeyProfile } from '../../store/types.js';
import { LR_RULE_WORDS } from '../../core/lr-rule.js';
import { batchCapOf, batchConfig, batchGain, chooseConfig, type JobConfig, type LrRule } from './batch-config.js';
import type { BatchView } from '../loop/insight.js';
import { limitsOf, modelOf } from '../loop/snapshot.js';

/** A batch-size decision worth an event: the reason and its data. */
export interface BatchChange {
  reason: string;
  /** `from`: the configuration in force before; `lr_scale`: the one told with `to`, by `lr_rule`. */
  data: { from: BatchView; to: BatchView; lr_scale: number; lr_rule: LrRule };
}

const totalOf = (b: LocalBatch, replicas: number): number => b.local_bsz * (b.accum_steps + 1) * replicas;
const viewOf = (b: LocalBatch, replicas: number): BatchView => ({
  local_bsz: b.local_bsz,
  accum_steps: b.accum_steps,
  replicas,
  total: totalOf(b, replicas),
});

/** `x1.08` style ratio: two decimals, so that a 5% gain never reads x1.0. */
const times = (x: number): string => `x${x.toFixed(2)}`;

/**
 * The change from the configuration in force (`from`) to the one the job is told (`config`), in
 * words, or undefined when they are equal. The prediction is by the model the choice was made
 * with (`profile`: the profile of its key, as in configFor) and names what it is relative to.
 * Pure.
 */
export function batchChange(
  job: JobRecord,
  latest: Measurement,
  from: LocalBatch,
  config: JobConfig,
  profile?: StoredKeyProfile,
  rule?: LrRule,
): BatchChange | undefined {
  if (from.local_bsz === config.local_bsz && from.accum_steps === config.accum_steps) return undefined;
  const replicas = Math.max(1, latest.num_replicas);
  const nodes = Math.max(1, Math.min(latest.num_nodes, replicas));
  const was = viewOf(from, replicas);
  const to = viewOf(config, replicas);
  const model = job.perf ? modelOf(job, profile) : undefined;
  const shape = (b: BatchView): string => `${b.local_bsz} x ${b.accum_steps + 1} x ${b.replicas}`;
  const parts: string[] = [];
  const cap = batchCapOf(job, limitsOf(job, profile));
  if (was.total > cap) parts.push(`batch ${was.total} in force is above the job's cap ${cap}`);
  if (job.spec.fixed_batch_size !== undefined) parts.push(`fixed batch size ${job.spec.fixed_batch_size}`);
  if (model) {
    // The gain the decision used (batch-config.ts batchGain): capped, with its interval.
    const g = batchGain(model, nodes, replicas, from, config);
    // Without a measured correction the fit's residuals are unknown: no interval to state.
    const interval = g.lo < g.gain || g.hi > g.gain ? `, 80% between ${times(g.lo)} and ${times(g.hi)},` : '';
    if (g.gain > 0)
      parts.push(
        `predicted goodput ${times(g.gain)}${interval} relative to batch ${was.total} (${shape(was)}) in force`,
      );
    parts.push(`statistical efficiency ${efficiency(model.grad, model.limits.init_batch_size, to.total).toFixed(2)}`);
  } else if (job.spec.fixed_batch_size === undefined) {
    parts.push('no throughput model yet');
  }
  const verb = to.total > was.total ? 'grew' : to.total < was.total ? 'shrank' : 'reshaped';
  return {
    reason:
      `batch size ${verb} ${was.total} -> ${to.total} (${shape(to)}, local x accumulation x ` +
      `replicas), learning rate x${config.lr_scale.toFixed(2)} (${LR_RULE_WORDS[rule ?? 'adascale']}): ` +
      parts.join(', '),
    data: { from: was, to, lr_scale: config.lr_scale, lr_rule: rule ?? 'adascale' },
  };
}

/** What one report is answered with, and the event to record when it changes the batch. */
export interface BatchAnswer {
  config: JobConfig;
  change?: BatchChange;
}

/** The configuration a job was last told, at which attempt and replica count, and since when a better one is predicted. */
interface Told {
  attempt: number;
  replicas: number;
  batch: LocalBatch;
  /** Whether `batch` is a change this attempt was already told (not what it started with). */
  changed: boolean;
  /** Since when (ms) every answer found a configuration predicted to gain BATCH_MIN_GAIN over `batch`. */
  better_since_ms?: number;
  /** With `changed`: whether that change grew the total batch (undefined: a reshape of one total). */
  grew?: boolean;
  /** With `changed`: whether a report measured at `batch` has come since it was told. */
  measured: boolean;
}

/**
 * Per job, the configuration in force; answers each report by configFor from it, so that a
 * change needs a real predicted gain over what the job runs (BATCH_MIN_GAIN), and each change is
 * one event whose `from` is the configuration in force. The first change of an attempt (from the
 * batch it started with) needs only that gain; undoing or redoing a change it was already told
 * also needs the gain to persist for `confirm_ms`: the model is refitted every few seconds from
 * step times that are noisy (on shared CPUs by tens of percent), and a job measured at a new
 * batch for the first time is often found slower than predicted there; a gain that one refit
 * shows and the next one undoes is not acted on. A fixed batch, or a configuration in force
 * beyond the job's limits or cap, changes at once.
 */
export class BatchDecisions {
  private readonly told = new Map<string, Told>();

  /** `confirm_ms`: how long a predicted gain must persist before the batch changes for it. */
  constructor(private readonly confirm_ms: number) {}

  /** The answer at `now_ms` to a report of `attempt` whose newest measurement is `latest`. */
  decide(
    job: JobRecord,
    attempt: number,
    latest: Measurement,
    now_ms: number,
    profile?: StoredKeyProfile,
    rule?: LrRule,
  ): BatchAnswer {
    const replicas = Math.max(1, latest.num_replicas);
    const last = this.told.get(job.id);
    const same = last !== undefined && last.attempt === attempt && last.replicas === replicas;
    const inForce = same ? last.batch : { local_bsz: latest.local_bsz, accum_steps: latest.accum_steps };
    const choice = chooseConfig(job, latest, profile, inForce, rule);
    let config = choice.config;
    const measured = same && (last.measured || sameBatch(latest, last.batch));
    const told: Told = { attempt, replicas, batch: inForce, changed: same && last.changed, measured };
    if (same && last.grew !== undefined) told.grew = last.grew;
    // A change that reverses the last one needs a measurement at the batch that one set: before
    // it, the model that asks for the reversal is a refit of the points the change was made on.
    const total = (b: LocalBatch): number => b.local_bsz * (b.accum_steps + 1);
    if (choice.optional && told.changed && !measured && told.grew !== undefined && total(config) !== total(inForce)) {
      if (total(config) > total(inForce) !== told.grew)
        config = batchConfig(job, limitsOf(job, profile), inForce, replicas, rule);
    }
    if (!sameBatch(config, inForce) && choice.optional && told.changed) {
      told.better_since_ms = same && last.better_since_ms !== undefined ? last.better_since_ms : now_ms;
      if (now_ms - told.better_since_ms < this.confirm_ms)
        config = batchConfig(job, limitsOf(job, profile), inForce, replicas, rule);
    }
    if (!sameBatch(config, inForce)) {
      told.batch = { local_bsz: config.local_bsz, accum_steps: config.accum_steps };
      told.changed = true;
      told.measured = false;
      if (total(config) !== total(inForce)) told.grew = total(config) > total(inForce);
      else delete told.grew;
      delete told.better_since_ms;
    }
    this.told.set(job.id, told);
    const change = batchChange(job, latest, inForce, config, profile, rule);
    return change ? { config, change } : { config };
  }

  /** Forgets an ended job. */
  forget(job_id: string): void {
    this.told.delete(job_id);
  }
}

const sameBatch = (a: LocalBatch, b: LocalBatch): boolean =>
  a.local_bsz === b.local_bsz && a.accum_steps === b.accum_steps;
