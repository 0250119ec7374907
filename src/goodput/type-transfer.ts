/**
 * Cross-GPU-type throughput prediction: a job's multi-GPU step time on a type where it has run
 * only on one GPU, from its profile on another (the reference) type and what the cluster has
 * learned of the target type from other jobs. Measured by `npm run bench:plan` (docs/planner.md).
 *
 * Why not Sia's rule (thr(N, T) = thr(1, T) / thr(1, ref) x thr(N, ref), {@link oneGpuRatioStep_s}):
 * it scales the whole step by the one-GPU compute ratio, so it carries the reference network's
 * share of the step over to a type whose network and compute differ (A100 nodes with NVLink and
 * InfiniBand beside T4 nodes on Ethernet). Here a step is compute overlapped with network time,
 * as in pollux-spec §3.1: t = (c^gamma + n^gamma)^(1/gamma), and the two are transferred apart:
 * - c: the job's own one-GPU micro-step time on the target type at that per-GPU batch (log-log
 *   interpolation between its measured batches);
 * - n: the job's network time on the reference type at the nearest measured shape (what its
 *   gradient costs on a known network), times the target type's network factor of the shape
 *   (geometric mean over the other jobs of their target / reference network time there).
 * How a row is split into c and n is the {@link TransferRule}: by default the step over the job's
 * one-GPU compute under the type's gamma, or the measured sync added to a per-shape compute
 * factor (better where a reference type's network hides behind its compute, as on A100 nodes).
 * The rule is the one that predicts the other jobs best, each left out in turn ({@link
 * fitTypeFactors}): the overlap differs between types (on the traces' RTX nodes steps add up,
 * gamma 1; on A100 nodes the network hides behind compute, gamma 3-4).
 * A shape is (nodes, replicas); one the other jobs never measured takes the factors of the nearest
 * learned shape with the same kind of link (several nodes or one), else 1.
 * A job whose own micro-step on the reference slows down on several GPUs of a node carries that
 * slowdown to the target (type-contention.ts): a host-bound job (data loading or CPU work that
 * the GPUs share) keeps the step of one reference node with as many GPUs per node as a floor
 * under its whole step ({@link hostFloorCurve}), since a faster GPU does not speed up the host
 * and the host's work overlaps the GPUs' compute and synchronization; another job's slowdown at a
 * shape and batch (replicas waiting for the slowest) moves with its compute, as a ratio ({@link
 * contendedComputeCurve}).
 *
 * Pure and deterministic: no I/O, no clock, no randomness.
 */
import { logOverlap } from './throughput.js';
import {
  contendedComputeCurve,
  type ContentionKnobs,
  DEFAULT_CONTENTION,
  hostFloorCurve,
  hostLimitedFloorCurve,
} from './type-contention.js';
import {
  computeTime_s,
  mean,
  median,
  MIN_TIME_S,
  nearestBy,
  oneGpuComputeCurve,
  shapeCurve,
  shapeKey,
  type Shape,
  type StepPredictor,
} from './type-curves.js';
import type { TypeMeasurement } from './type-measurement.js';

export {
  contendedComputeCurve,
  type ContentionKnobs,
  DEFAULT_CONTENTION,
  HOST_BOUND_CONTENTION,
  HOST_LIMITED_SHARE,
  hostFloorCurve,
  hostLimitedFloorCurve,
  isHostBound,
  perStepShare,
  relativeContentionCurve,
} from './type-contention.js';
export {
  batchCurve,
  computeTime_s,
  oneGpuComputeCurve,
  shapeCurve,
  type Shape,
  type StepPredictor,
} from './type-curves.js';

/** A job's data on two types: its reference profile and its rows on the target type. */
export interface TransferJob {
  reference: readonly TypeMeasurement[];
  /** Rows on the target type: one-GPU rows for a job being predicted; all its rows when learning. */
  target: readonly TypeMeasurement[];
}

/**
 * How a multi-GPU row is split into compute and network time, and put back together:
 * - `step`: the network time is what the step shows over the job's one-GPU compute, under the
 *   overlap exponent `gamma` ({@link networkBehind_s}); a prediction overlaps the job's one-GPU
 *   compute with the transferred network time;
 * - `sync`: the network time is the row's measured sync, added to its compute; a prediction adds
 *   the transferred sync to the job's one-GPU compute times the shape's compute factor.
 */
export type TransferRule = { basis: 'step'; gamma: number } | { basis: 'sync' };

/** The rules {@link fitTypeFactors} chooses from: `step` with gamma 1, 1.5, 2, 3, 4, and `sync`. */
export const RULE_CANDIDATES: readonly TransferRule[] = [
  ...[1, 1.5, 2, 3, 4].map((gamma): TransferRule => ({ basis: 'step', gamma })),
  { basis: 'sync' },
];

/** Factors of one shape on the target type, learned from other jobs. Invariant: both > 0. */
export interface ShapeFactor extends Shape {
  /** Network time on the target over the same job's network time on the reference at the nearest shape. */
  network: number;
  /** Multi-GPU micro-step time over one-GPU micro-step time at the same per-GPU batch (used by the `sync` rule). */
  compute: number;
  /** Jobs that measured this shape. */
  num_jobs: number;
}

/** What the cluster has learned of a target type. Invariant: `shapes` sorted by (nodes, replicas), each once. */
export interface TypeFactors {
  rule: TransferRule;
  shapes: readonly ShapeFactor[];
  /** Jobs whose target measurements were learned from. */
  num_jobs: number;
  /** The contention thresholds the factors were learned and are applied with; absent: {@link DEFAULT_CONTENTION}. */
  knobs?: ContentionKnobs;
}

/**
 * Network time of a step no longer than its compute, as a share of the step: nothing is visible,
 * but a log ratio needs a positive value (1e-3: a thousandth of the step is below the traces' noise).
 */
const HIDDEN_NETWORK_SHARE = 1e-3;

/** Step time (s) of compute `compute_s` overlapped with network time `network_s` by `gamma`. */
export function overlapStep_s(compute_s: number, network_s: number, gamma: number): number {
  return Math.exp(logOverlap(compute_s, Math.max(network_s, MIN_TIME_S), gamma));
}

/**
 * The network time (s) that, overlapped with `compute_s` by `gamma`, gives `step_s`: the inverse
 * of {@link overlapStep_s}; a share of the step when the step is not longer than the compute.
 */
export function networkBehind_s(step_s: number, compute_s: number, gamma: number): number {
  const floor = HIDDEN_NETWORK_SHARE * step_s;
  if (step_s <= compute_s) return floor;
  // (s^g - c^g)^(1/g) = s (1 - (c/s)^g)^(1/g), computed in this form so large gamma cannot overflow.
  return Math.max(step_s * Math.pow(1 - Math.pow(compute_s / step_s, gamma), 1 / gamma), floor);
}

/** The network time of a multi-GPU row under `rule`, given the job's one-GPU compute at its batch (s); > 0. */
function rowNetwork_s(m: TypeMeasurement, oneGpuCompute_s: number, rule: TransferRule): number {
  if (rule.basis === 'sync') return Math.max(m.sync_time_s, HIDDEN_NETWORK_SHARE * m.step_time_s);
  return networkBehind_s(m.step_time_s, oneGpuCompute_s, rule.gamma);
}

/** The job's network-time curve on the reference type under `rule`. */
function referenceNetworkCurve(reference: readonly TypeMeasurement[], rule: TransferRule): StepPredictor | undefined {
  const compute = oneGpuComputeCurve(reference);
  if (!compute) return undefined;
  return shapeCurve(reference, (m) => rowNetwork_s(m, compute(m.local_bsz), rule));
}

/**
 * Learns the target type's factors per shape under `rule` from `jobs` (other jobs, with their
 * multi-GPU rows on the target): per job and shape, the median over its rows of log(target
 * network time / its reference network time at the nearest shape) and of its compute over its
 * one-GPU compute; per shape, the exponential of the mean over jobs of the first, the median of
 * the second. A job's network on the target is read against its GPU compute there ({@link
 * contendedComputeCurve}), without its host floor: the floor bounds the predicted step, it is not
 * compute the network overlaps with. Jobs without one-GPU rows on both types or without
 * multi-GPU rows on both are skipped. Pure and deterministic.
 */
export function learnTypeFactors(
  jobs: readonly TransferJob[],
  rule: TransferRule,
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): TypeFactors {
  const logs = new Map<string, number[]>();
  const computes = new Map<string, number[]>();
  const shapes = new Map<string, Shape>();
  let numJobs = 0;
  for (const job of jobs) {
    const oneGpu = oneGpuComputeCurve(job.target);
    const compute = contendedComputeCurve(job.reference, job.target, knobs);
    const reference = referenceNetworkCurve(job.reference, rule);
    if (!oneGpu || !compute || !reference) continue;
    const perShape = new Map<string, number[]>();
    const computePerShape = new Map<string, number[]>();
    for (const m of job.target) {
      if (m.num_replicas < 2) continue;
      const onReference = reference(m.num_nodes, m.num_replicas, m.local_bsz);
      if (onReference === undefined) continue;
      const key = shapeKey(m);
      shapes.set(key, { num_nodes: m.num_nodes, num_replicas: m.num_replicas });
      push(
        perShape,
        key,
        Math.log(rowNetwork_s(m, compute(m.num_nodes, m.num_replicas, m.local_bsz), rule) / onReference),
      );
      push(computePerShape, key, computeTime_s(m) / oneGpu(m.local_bsz));
    }
    if (perShape.size === 0) continue;
    numJobs++;
    for (const [key, values] of perShape) push(logs, key, median(values));
    for (const [key, values] of computePerShape) push(computes, key, median(values));
  }
  const learned = [...shapes.entries()].map(([key, shape]): ShapeFactor => {
    const perJob = logs.get(key) as number[];
    return {
      ...shape,
      network: Math.exp(mean(perJob)),
      compute: median(computes.get(key) as number[]),
      num_jobs: perJob.length,
    };
  });
  learned.sort((a, b) => a.num_nodes - b.num_nodes || a.num_replicas - b.num_replicas);
  return { rule, shapes: learned, num_jobs: numJobs, ...(knobs === DEFAULT_CONTENTION ? {} : { knobs }) };
}

/**
 * The target type's factors from `jobs`, with the rule chosen among `candidates`: for each, every
 * job is predicted from the others ({@link learnTypeFactors}, {@link transferPredictor}) and the
 * candidate with the lowest mean of the jobs' median errors wins (every job counts: a job whose
 * compute slows down on many GPUs is modelled by its contention, {@link contendedComputeCurve},
 * rather than left out of the score); ties go to the earlier candidate. With fewer than 3 usable
 * jobs, the first candidate. Pure and deterministic.
 */
export function fitTypeFactors(
  jobs: readonly TransferJob[],
  candidates: readonly TransferRule[] = RULE_CANDIDATES,
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): TypeFactors {
  const first = candidates[0] ?? { basis: 'step', gamma: 1 };
  const usable = jobs.filter((j) => learnTypeFactors([j], first, knobs).num_jobs === 1);
  if (usable.length < 3) return learnTypeFactors(usable, first, knobs);
  let best = first;
  let bestScore = Infinity;
  for (const rule of candidates) {
    const errors = usable.map((job, i) =>
      medianError(
        job,
        learnTypeFactors(
          usable.filter((_, k) => k !== i),
          rule,
          knobs,
        ),
      ),
    );
    const score = mean(errors);
    if (score < bestScore) {
      best = rule;
      bestScore = score;
    }
  }
  return learnTypeFactors(usable, best, knobs);
}

/** Median |predicted / measured - 1| of throughput over the job's multi-GPU target rows (a row it cannot predict counts 1). */
function medianError(job: TransferJob, factors: TypeFactors): number {
  const predict = transferPredictor(
    { reference: job.reference, target: job.target.filter((m) => m.num_replicas === 1) },
    factors,
  );
  const errors = job.target
    .filter((m) => m.num_replicas > 1)
    .map((m) => {
      const step = predict?.(m.num_nodes, m.num_replicas, m.local_bsz);
      return step === undefined ? 1 : Math.abs(m.step_time_s / step - 1);
    });
  return median(errors);
}

/**
 * The factors for `shape`: learned there, else at the nearest learned shape with the same kind of
 * link (one node or several; nearest in node ratio, then replica ratio), else 1 and 1.
 */
export function factorAt(factors: TypeFactors, shape: Shape): { network: number; compute: number } {
  const multiNode = shape.num_nodes > 1;
  const sameLink = factors.shapes.filter((s) => s.num_nodes > 1 === multiNode);
  const best = nearestBy(
    sameLink,
    (s) =>
      1e3 * Math.abs(Math.log(s.num_nodes / shape.num_nodes)) + Math.abs(Math.log(s.num_replicas / shape.num_replicas)),
  );
  return best ? { network: best.network, compute: best.compute } : { network: 1, compute: 1 };
}

/**
 * The job's step-time predictor on the target type from its reference profile and its one-GPU
 * target rows (its multi-GPU target rows, if any, are not read): one GPU, its own compute; more,
 * that compute (with its relative contention, {@link contendedComputeCurve}) with its reference
 * network time at the nearest shape times the shape's network factor, overlapped with it by gamma
 * (`step` rule) or added to it times the shape's compute factor (`sync` rule); a host-bound job's
 * step is at least its host floor ({@link hostFloorCurve}), a host-limited one's at least its host-limited floor
 * ({@link hostLimitedFloorCurve}). Undefined when the job lacks one-GPU
 * rows on either type or multi-GPU rows on the reference. Pure.
 */
export function transferPredictor(job: TransferJob, factors: TypeFactors): StepPredictor | undefined {
  const knobs = factors.knobs ?? DEFAULT_CONTENTION;
  const compute = contendedComputeCurve(job.reference, job.target, knobs);
  const reference = referenceNetworkCurve(job.reference, factors.rule);
  if (!compute || !reference) return undefined;
  const floor = hostFloorCurve(job.reference, knobs);
  const hostLimited = hostLimitedFloorCurve(
    job.reference,
    job.target.filter((m) => m.num_replicas === 1),
    knobs,
  );
  const rule = factors.rule;
  return (num_nodes, num_replicas, local_bsz) => {
    const compute_s = compute(num_nodes, num_replicas, local_bsz);
    if (num_replicas < 2) return compute_s;
    const onReference = reference(num_nodes, num_replicas, local_bsz);
    if (onReference === undefined) return undefined;
    const f = factorAt(factors, { num_nodes, num_replicas });
    const network_s = onReference * f.network;
    const step_s =
      rule.basis === 'step' ? overlapStep_s(compute_s, network_s, rule.gamma) : compute_s * f.compute + network_s;
    return Math.max(
      step_s,
      floor?.(num_nodes, num_replicas, local_bsz) ?? 0,
      hostLimited?.(num_nodes, num_replicas, local_bsz) ?? 0,
    );
  };
}

/**
 * bench:plan's leave-one-out prediction of `job` on the target: factors fitted on `others`, and
 * of `job`'s target rows only the one-GPU ones read (its multi-GPU rows are dropped here).
 */
export function leftOutPredictor(
  job: TransferJob,
  others: readonly TransferJob[],
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): { predict: StepPredictor | undefined; factors: TypeFactors } {
  const factors = fitTypeFactors(others, RULE_CANDIDATES, knobs);
  return {
    predict: transferPredictor(
      { reference: job.reference, target: job.target.filter((m) => m.num_replicas === 1) },
      factors,
    ),
    factors,
  };
}

/** A rule as text: `overlap gamma G` or `sync + compute factor`. */
export function ruleLabel(rule: TransferRule): string {
  return rule.basis === 'step' ? `overlap, gamma ${rule.gamma}` : 'measured sync, added';
}

/**
 * Sia's one-GPU-ratio rule (the baseline): the step time of `m` (a target-type configuration)
 * as thr(N, T) = thr(1, T) / thr(1, ref) x thr(N, ref), from the reference row of the same
 * placement (or, for rows with counts only, the same counts) and the one-GPU rows of both types,
 * all at m's per-GPU batch. Undefined where any of the three is not measured.
 */
export function oneGpuRatioStep_s(
  m: TypeMeasurement,
  reference: readonly TypeMeasurement[],
  targetOneGpu: readonly TypeMeasurement[],
): number | undefined {
  const sameConfig = (r: TypeMeasurement): boolean =>
    r.local_bsz === m.local_bsz &&
    (m.placement && r.placement
      ? r.placement.join(',') === m.placement.join(',')
      : r.num_nodes === m.num_nodes && r.num_replicas === m.num_replicas);
  const refN = reference.find(sameConfig);
  const ref1 = reference.find((r) => r.num_replicas === 1 && r.local_bsz === m.local_bsz);
  const target1 = targetOneGpu.find((r) => r.num_replicas === 1 && r.local_bsz === m.local_bsz);
  if (!refN || !ref1 || !target1) return undefined;
  // Per-replica throughput scales with the one-GPU throughput ratio, i.e. step times scale with the one-GPU step ratio.
  return (refN.step_time_s * target1.step_time_s) / ref1.step_time_s;
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  map.set(key, [...(map.get(key) ?? []), value]);
}
