/**
 * What the scheduler knows about a job, in the user's terms: its batch (local x accumulation x
 * replicas), learning-rate scale, measured throughput, statistical efficiency, goodput, the
 * speedup it has now and the one predicted for its best size, and reasons for size and batch
 * changes in words. Pure over its inputs (the goodput model, the latest measurement).
 */
import { splitScopedKey } from '../../core/profile-scope.js';
import { resumeWords } from '../../store/lifecycle.js';
import { adascaleGain, efficiency } from '../../goodput/efficiency.js';
import { fixedBatchChoice, optimizeBatch } from '../../goodput/optimize.js';
import { bestGoodput } from '../../goodput/speedup.js';
import { jobBatchPolicy } from '../../policy/job-batch.js';
import type { GainClaim } from '../../policy/policy.js';
import { lrRuleSchema, type LrRule } from '../../core/wire.js';
import type { GoodputModel } from '../../goodput/types.js';
import type { JobEvent, JobRecord, Measurement, StoredKeyProfile } from '../../store/types.js';
import { batchCapOf } from '../reports/batch-config.js';
import { limitsOf, modelOf } from './snapshot.js';

/** A batch configuration: total = local_bsz x (accum_steps + 1) x replicas. */
export interface BatchView {
  local_bsz: number;
  accum_steps: number;
  replicas: number;
  total: number;
}

/** A job's state in goodput terms; a field is null while it is unknown (no report, no model). */
export interface JobInsight {
  /** The configuration of the job's latest measurement. */
  batch: BatchView | null;
  /** Learning-rate multiplier at that batch (1 at the initial batch size): AdaScale's, or `lr_rule`'s. */
  lr_scale: number | null;
  /** The script's learning-rate rule, as the batch-size decision in force names it; absent: AdaScale assumed. */
  lr_rule?: LrRule;
  /** Measured samples per second (total batch / step time of the latest measurement). */
  throughput_samples_s: number | null;
  /** Progress per sample relative to the initial batch size, in (0, 1]. */
  efficiency: number | null;
  /** throughput x efficiency: initial-batch-equivalent samples per second. */
  goodput: number | null;
  /**
   * The model's best goodput at the job's placement (nodes, replicas) now, or at its latest
   * measurement's when it holds no devices, relative to its best on one replica. Predicted like
   * `predicted`, so it never exceeds `predicted.speedup` where the placement is one node (a
   * measured goodput over a predicted base mixed the two and showed, for a job its model
   * underestimates, "x3.3 now" beside "best x2.0").
   */
  speedup: number | null;
  /** The best replica count up to max_replicas (at most 64) by the model, its speedup and batch. */
  predicted: { replicas: number; speedup: number; batch_size: number } | null;
}

/** Largest replica count `predicted` considers. */
const MAX_PREDICTED_REPLICAS = 64;

const total = (local_bsz: number, accum_steps: number, replicas: number) => local_bsz * (accum_steps + 1) * replicas;

/** A batch-size decision as its event records it (control/reports/batch-decisions.ts). */
export interface BatchDecisionView {
  to: BatchView;
  lr_scale: number;
  /** The rule `lr_scale` follows (events recorded before it was named have none). */
  lr_rule?: LrRule;
}

/**
 * The batch-size decision in force: the newest `batch-size` event recorded since the job's latest
 * launch (a restart or rescale starts from the batch the job resumes with), if any.
 */
export function batchDecisionInForce(job: JobRecord, events: readonly JobEvent[]): BatchDecisionView | undefined {
  if (job.launched_at_ms === null) return undefined;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as JobEvent;
    if (e.at_ms < job.launched_at_ms) return undefined;
    if (e.kind !== 'batch-size') continue;
    const to = e.data.to as Partial<BatchView> | undefined;
    const lr_scale = e.data.lr_scale;
    const ok =
      to &&
      [to.local_bsz, to.accum_steps, to.replicas, to.total].every((x) => typeof x === 'number') &&
      typeof lr_scale === 'number';
    if (!ok) return undefined;
    const rule = lrRuleSchema.safeParse(e.data.lr_rule);
    return rule.success ? { to: to as BatchView, lr_scale, lr_rule: rule.data } : { to: to as BatchView, lr_scale };
  }
  return undefined;
}

/**
 * The job's insight from its record and its latest measurement (if any); `profile`: the profile
 * its model starts from (control/reports/profile-book.ts), for a prediction before its own reports.
 * `decision`: the batch-size decision in force ({@link batchDecisionInForce}); the batch and
 * learning-rate scale shown are then its own, as its event states them (the job applies it from
 * its next step), while throughput, efficiency and goodput stay those measured.
 */
export function jobInsight(
  job: JobRecord,
  latest: Measurement | undefined,
  profile?: StoredKeyProfile,
  decision?: BatchDecisionView,
): JobInsight {
  const model = modelOf(job, profile);
  const B0 = limitsOf(job, profile).init_batch_size;
  const insight: JobInsight = {
    batch: null,
    lr_scale: null,
    throughput_samples_s: null,
    efficiency: null,
    goodput: null,
    speedup: null,
    predicted: null,
  };
  if (latest) {
    const replicas = Math.max(1, latest.num_replicas);
    const batch = total(latest.local_bsz, latest.accum_steps, replicas);
    insight.batch = { local_bsz: latest.local_bsz, accum_steps: latest.accum_steps, replicas, total: batch };
    if (latest.step_time_s > 0) insight.throughput_samples_s = batch / latest.step_time_s;
    if (decision && decision.to.replicas === replicas) {
      insight.batch = { ...decision.to };
      insight.lr_scale = decision.lr_scale;
      // Absent means AdaScale: the listing, which reads no events, then shows the same insight.
      if (decision.lr_rule && decision.lr_rule !== 'adascale') insight.lr_rule = decision.lr_rule;
    }
    if (job.grad) {
      if (insight.lr_scale === null) insight.lr_scale = adascaleGain(job.grad, batch / B0);
      insight.efficiency = efficiency(job.grad, B0, batch);
      if (insight.throughput_samples_s !== null) insight.goodput = insight.throughput_samples_s * insight.efficiency;
    }
  }
  if (model) {
    const base = bestGoodput(model, 1, 1, jobBatchPolicy(job.spec));
    if (base > 0) {
      insight.speedup = speedupAt(model, job, placementNow(job, latest), base);
      // Bounded: the view is computed per listed job; a larger job's best size is past 64 rarely.
      for (let r = 1; r <= Math.min(job.spec.max_replicas, MAX_PREDICTED_REPLICAS); r++) {
        const choice =
          job.spec.fixed_batch_size !== undefined
            ? fixedBatchChoice(model, 1, r, job.spec.fixed_batch_size)
            : optimizeBatch(model, 1, r, batchCapOf(job, model.limits), true);
        const candidate = {
          replicas: r,
          speedup: choice.goodput / base,
          batch_size: total(choice.local_bsz, choice.accum_steps, r),
        };
        if (insight.predicted === null || candidate.speedup > insight.predicted.speedup + 1e-9)
          insight.predicted = candidate;
      }
    }
  }
  return insight;
}

/**
 * `JobInsight.speedup` alone (the dashboard's jobs table): the model's best goodput at the job's
 * placement now over its best on one replica, with the profile its model starts from; null
 * without a model or a placement.
 */
export function currentSpeedup(
  job: JobRecord,
  latest: Measurement | undefined,
  profile?: StoredKeyProfile,
): number | null {
  const model = modelOf(job, profile);
  return model
    ? speedupAt(model, job, placementNow(job, latest), bestGoodput(model, 1, 1, jobBatchPolicy(job.spec)))
    : null;
}

function speedupAt(
  model: GoodputModel,
  job: JobRecord,
  at: { nodes: number; replicas: number } | undefined,
  base: number,
): number | null {
  return at && base > 0 ? bestGoodput(model, at.nodes, at.replicas, jobBatchPolicy(job.spec)) / base : null;
}

/** The job's placement now (its allocation while it holds devices), else that of its latest measurement. */
function placementNow(
  job: JobRecord,
  latest: Measurement | undefined,
): { nodes: number; replicas: number } | undefined {
  if (job.allocation.length > 0) return { nodes: new Set(job.allocation).size, replicas: job.allocation.length };
  return latest ? { nodes: Math.max(1, latest.num_nodes), replicas: Math.max(1, latest.num_replicas) } : undefined;
}

/** "x1.15, 80% between x1.02 and x1.30": a claimed gain with its interval (two decimals). */
export function claimWords(claim: GainClaim): string {
  const x = (v: number): string => `x${v.toFixed(2)}`;
  return `${x(claim.gain)}, 80% between ${x(claim.lo)} and ${x(claim.hi)}`;
}

/** `x2.4` style ratio. */
const times = (x: number) => `x${x >= 10 ? x.toFixed(0) : x.toFixed(x >= 1 ? 1 : 2)}`;

/** How devices are named in reasons: 'GPU' or 'CPU slot'. */
export function deviceUnit(devices: readonly { kind: 'gpu' | 'cpu' }[]): string {
  return devices[0]?.kind === 'gpu' ? 'GPU' : 'CPU slot';
}

/** Context of a size decision, for its reason. */
export interface ResizeContext {
  policy: string;
  /** Devices no job held before this round. */
  idle: number;
  /** 'GPU' or 'CPU slot', for the words. */
  unit: string;
  /** By job id, the profile each job's model starts from (control/reports/profile-book.ts). */
  profiles?: ReadonlyMap<string, StoredKeyProfile>;
  /** The gain the policy decided this resize with, and its 80% interval (PolicyDecision.gains). */
  claim?: GainClaim;
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/**
 * Why a job goes from `from` to `to` replicas, in words with the model's prediction (on one
 * node, as placed by the local backend) when it has one: "grew 1 -> 3 (goodput: predicted
 * goodput on 3 x2.4 relative to its current 1 CPU slot, each at its best batch; 3 CPU slots
 * idle)". Pure.
 */
export function resizeReason(job: JobRecord, from: number, to: number, ctx: ResizeContext): string {
  const fromProfile = ctx.profiles?.get(job.id);
  const model = modelOf(job, fromProfile);
  const predicted = model && from > 0 && to > 0 ? predictedRatio(model, job, from, to) : undefined;
  // Relative to the size it runs at now, both at their best batch, so that a shrink that reads
  // "x13" says what the 13 is relative to. The policy's own claim, when it made one, is the gain
  // it decided with, with its interval.
  const claim = ctx.claim;
  const gain = claim
    ? `predicted speedup on ${to} ${claimWords(claim)} relative to its current ${plural(from, ctx.unit)}`
    : predicted !== undefined
      ? `predicted goodput on ${to} ${times(predicted)} relative to its current ${plural(from, ctx.unit)}, each at its best batch`
      : undefined;
  const idle = `${plural(ctx.idle, ctx.unit)} idle`;
  if (from === 0 && to > 0) {
    const why = job.launches === 0 ? 'first start' : resumeWords(job);
    const by = fromProfile && job.perf === null ? ` by the profile of '${splitScopedKey(fromProfile.key).key}'` : '';
    const basis = model
      ? `predicted speedup ` +
        `${times(bestGoodput(model, 1, to, jobBatchPolicy(job.spec)) / Math.max(1e-12, bestGoodput(model, 1, 1, jobBatchPolicy(job.spec))))} ` +
        `over 1 replica${by}`
      : 'no throughput measured yet';
    return `${why} on ${plural(to, ctx.unit)} (${ctx.policy}: ${basis}, ${idle})`;
  }
  if (to === 0)
    return `preempted ${from} -> 0 (${ctx.policy}: its ${plural(from, ctx.unit)} go to other jobs; ${resumeWords(job)})`;
  const verb = to > from ? 'grew' : 'shrank';
  const parts = [
    gain ?? 'no throughput model yet',
    ...(to > from ? [idle] : [`frees ${plural(from - to, ctx.unit)} for other jobs`]),
  ];
  if (to > from && job.max_profiled_replicas < to && predicted === undefined)
    parts.push('exploring a size not measured yet');
  return `${verb} ${from} -> ${to} (${ctx.policy}: ${parts.join('; ')})`;
}

function predictedRatio(model: GoodputModel, job: JobRecord, from: number, to: number): number {
  const policy = jobBatchPolicy(job.spec);
  const before = bestGoodput(model, 1, from, policy);
  return before > 0 ? bestGoodput(model, 1, to, policy) / before : 1;
}
