/**
 * The planner's 80% intervals (docs/planner.md): each prediction times the spread of
 * log(measured / predicted) on data it did not see.
 * - a shape the job measured: the 10th-90th percentiles of the fit's residuals on its own points
 *   (the uncorrected fit, so the spread the correction absorbs still counts), at least
 *   {@link MIN_FIT_SPREAD} each side;
 * - a type transferred from other keys (goodput/type-transfer.ts): {@link TRANSFER_LOG_INTERVAL},
 *   the spread of the transfer's errors that bench:plan measures over Sia's types;
 * - anything else (another shape of a measured type, a type estimated from the specifications):
 *   wider, uncalibrated bounds, said so in the row's basis.
 * Memory: the residuals of the linear memory fit on the GPU's measured peaks. Pure.
 */
import { atLeast, logErrorInterval, MIN_FIT_SPREAD, type LogInterval } from '../goodput/interval.js';

export { applyInterval, atLeast, fitResidualInterval, MIN_FIT_SPREAD, type LogInterval } from '../goodput/interval.js';

/**
 * The 10th and 90th percentiles of log(measured / predicted step) of the cross-type transfer over
 * all rows of Sia's types (aws reference; `npm run bench:plan -- --traces ../shared/data/sia/traces`
 * prints them as the planner's TRANSFER_LOG_INTERVAL). Left out per type, intervals of this kind
 * contain the share of rows bench:plan reports (docs/planner.md).
 */
export const TRANSFER_LOG_INTERVAL: LogInterval = { lo: -0.1398, hi: 0.2016 };

/**
 * A type estimated from the specifications alone (FP32 rate, bandwidth, ring all-reduce): x0.5 to
 * x2. Not calibrated: no data of this kind was measured against it.
 */
export const SPEC_LOG_INTERVAL: LogInterval = { lo: -Math.LN2, hi: Math.LN2 };

/** A CPU profile carried to a GPU type by the nominal cpu entry: x0.25 to x4, an order of magnitude. Not calibrated. */
export const CPU_SPEC_LOG_INTERVAL: LogInterval = { lo: -2 * Math.LN2, hi: 2 * Math.LN2 };

/** An interval and what it rests on, in words. */
export interface IntervalBasis {
  interval: LogInterval;
  basis: string;
  /** Whether bench:plan measured how often intervals of this kind contain the truth. */
  calibrated: boolean;
}

/** Two independent spreads combined conservatively: their bounds added. */
export function widen(a: LogInterval, b: LogInterval): LogInterval {
  return { lo: a.lo + b.lo, hi: a.hi + b.hi };
}

/** The 80% interval of a linear memory fit's residuals on its peaks, at least {@link MIN_FIT_SPREAD}. */
export function memoryResidualInterval(
  memory: { base_bytes: number; per_sample_bytes: number },
  samples: readonly { local_bsz: number; peak_bytes: number }[],
): LogInterval {
  const logs = samples.map((s) =>
    Math.log(s.peak_bytes / Math.max(memory.base_bytes + memory.per_sample_bytes * s.local_bsz, 1)),
  );
  return atLeast(logErrorInterval(logs) ?? { lo: 0, hi: 0 }, MIN_FIT_SPREAD);
}
