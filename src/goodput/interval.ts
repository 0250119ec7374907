/**
 * 80% intervals of the model's predictions (docs/planner.md, docs/policy.md): a prediction times
 * the 10th and 90th percentiles of log(measured / predicted) on the points the fit saw. The one
 * implementation the planner's rows (planner/plan-interval.ts) and the policy's gains
 * (policy/goodput/, control/reports/batch-config.ts) read. Pure and deterministic.
 */
import { optimStepTime_s } from './throughput.js';
import type { PerfParams, ProfilePoint, StepCorrection } from './types.js';

/**
 * Log spread added each side of an interval per unit of {@link measuredDistance} from the nearest
 * measured configuration: the fit's residuals on its own points say nothing of its error where it
 * measured nothing. Calibrated by `npm run bench:unmeasured-calibration` on the Pollux traces
 * (ncf left out: it is the held-out job of bench:live-decisions): the 80th percentile over
 * held-out configurations of the spread each one needs beyond the residuals, per unit of distance.
 */
export const UNMEASURED_SPREAD_PER_LOG = 0.27;

/** An interval of log(measured / predicted). Invariant: lo <= hi. */
export interface LogInterval {
  lo: number;
  hi: number;
}

/** The share of measurements an interval of this module aims to contain. */
export const INTERVAL_COVERAGE = 0.8;

/** A measured shape's interval is at least this wide each side (log): run-to-run noise of a step. */
export const MIN_FIT_SPREAD = 0.03;

/** The q-quantile (0 <= q <= 1) of `xs` by linear interpolation between order statistics; NaN when empty. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  // A typed array sorts numerically without a comparator call per pair (a policy round asks
  // this of every running job's correction: bench:scale's simulated day).
  const s = Float64Array.from(xs).sort();
  const pos = Math.min(Math.max(q, 0), 1) * (s.length - 1);
  const i = Math.floor(pos);
  const a = s[i] as number;
  const b = s[Math.min(i + 1, s.length - 1)] as number;
  return a + (b - a) * (pos - i);
}

/**
 * The central `coverage` interval of log errors (log(measured / predicted)): their (1 - coverage)/2
 * and (1 + coverage)/2 quantiles. Undefined without errors. Non-finite errors are ignored.
 */
export function logErrorInterval(
  logErrors: readonly number[],
  coverage: number = INTERVAL_COVERAGE,
): LogInterval | undefined {
  const xs = logErrors.filter(Number.isFinite);
  if (xs.length === 0) return undefined;
  return { lo: quantile(xs, (1 - coverage) / 2), hi: quantile(xs, (1 + coverage) / 2) };
}

/** The bounds of a positive prediction under the interval: [x e^lo, x e^hi]. */
export function applyInterval(x: number, interval: LogInterval): [number, number] {
  return [x * Math.exp(interval.lo), x * Math.exp(interval.hi)];
}

/** Widens an interval to at least `spread` each side. */
export function atLeast(interval: LogInterval, spread: number): LogInterval {
  return { lo: Math.min(interval.lo, -spread), hi: Math.max(interval.hi, spread) };
}

/**
 * The 80% interval of the fit's residuals on its own points (uncorrected optimizer step), at least
 * {@link MIN_FIT_SPREAD}.
 */
export function fitResidualInterval(perf: PerfParams, points: readonly ProfilePoint[]): LogInterval {
  const logs = points.map((p) =>
    Math.log(p.optim_step_time_s / optimStepTime_s(perf, p.num_nodes, p.num_replicas, p.local_bsz)),
  );
  return atLeast(logErrorInterval(logs) ?? { lo: 0, hi: 0 }, MIN_FIT_SPREAD);
}

/**
 * The same interval read from a fit's correction (goodput/step-correction.ts): its per-shape,
 * per-local-batch factors are the uncorrected fit's measured / predicted optimizer-step times on
 * the configurations it was fitted on (several points of one configuration averaged), so a driver
 * that keeps the correction but not the points gets {@link fitResidualInterval} of those
 * configurations. At least {@link MIN_FIT_SPREAD}.
 */
export function correctionInterval(correction: StepCorrection): LogInterval {
  let interval = intervalsByCorrection.get(correction);
  if (!interval) {
    const logs = correction.shapes.flatMap((s) => s.by_batch.map((b) => Math.log(b.factor)));
    interval = atLeast(logErrorInterval(logs) ?? { lo: 0, hi: 0 }, MIN_FIT_SPREAD);
    intervalsByCorrection.set(correction, interval);
  }
  return interval;
}

/**
 * correctionInterval's results by correction object: a driver that keeps a job's fit between
 * refits (the simulator) hands the policy the same correction every round, and its interval was
 * half of the policy's per-job work in a simulated day at 16,384 GPUs (issue #49). Corrections
 * are never changed once made (they are data), so the memo is exact.
 */
const intervalsByCorrection = new WeakMap<StepCorrection, LogInterval>();

/**
 * The 80% interval of a predicted gain `ratio` = predicted(new) / value(in force), where the
 * configuration in force was measured (its error is in the fit's residuals already) and the new
 * one is predicted: [ratio e^lo, ratio e^hi]. Pure.
 */
export function gainInterval(ratio: number, interval: LogInterval): { gain: number; lo: number; hi: number } {
  const [lo, hi] = applyInterval(ratio, interval);
  return { gain: ratio, lo, hi };
}

/**
 * How far a configuration is from what a correction measured: the smallest
 * |ln(n / n')| + |ln(r / r')| + |ln(b / b')| over the measured (nodes n', replicas r', local batch
 * b') of `correction`; 0 at a measured configuration, Infinity when nothing was measured. Pure.
 */
export function measuredDistance(
  correction: StepCorrection,
  num_nodes: number,
  num_replicas: number,
  local_bsz: number,
): number {
  let best = Infinity;
  for (const s of correction.shapes) {
    const shape = Math.abs(Math.log(num_nodes / s.num_nodes)) + Math.abs(Math.log(num_replicas / s.num_replicas));
    if (shape >= best) continue;
    for (const b of s.by_batch) best = Math.min(best, shape + Math.abs(Math.log(local_bsz / b.local_bsz)));
  }
  return best;
}

/**
 * The 80% interval of a prediction `distance` ({@link measuredDistance}) away from the measured
 * configurations: {@link correctionInterval} widened by {@link UNMEASURED_SPREAD_PER_LOG} x distance
 * each side (the widening at most {@link MAX_UNMEASURED_SPREAD}). Equal to correctionInterval at a
 * measured configuration. Pure.
 */
export function unmeasuredInterval(correction: StepCorrection, distance: number): LogInterval {
  return widenBy(correctionInterval(correction), distance);
}

/** The largest widening for distance (log, each side): x0.5 to x2 on top of the residuals. */
export const MAX_UNMEASURED_SPREAD = Math.LN2;

/** `interval` widened each side by {@link UNMEASURED_SPREAD_PER_LOG} x `distance` (at most {@link MAX_UNMEASURED_SPREAD}). */
export function widenBy(interval: LogInterval, distance: number): LogInterval {
  const w = Math.min(UNMEASURED_SPREAD_PER_LOG * Math.max(0, distance), MAX_UNMEASURED_SPREAD);
  return { lo: interval.lo - w, hi: interval.hi + w };
}
