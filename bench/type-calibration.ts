/**
 * Calibrated intervals for the planner's predictions: an 80% interval of a prediction is the
 * prediction times the 10th and 90th percentiles of measured / predicted on data the prediction
 * did not see (other GPU types, other applications). bench:plan measures how often such an
 * interval contains a left-out measurement (docs/planner.md). Pure and deterministic.
 */

export {
  INTERVAL_COVERAGE,
  applyInterval,
  logErrorInterval,
  quantile,
  type LogInterval,
} from '../src/goodput/interval.js';
import type { LogInterval } from '../src/goodput/interval.js';

/** Whether a log error lies within the interval (an undefined error, a row not predicted, does not). */
export function insideInterval(logError: number | undefined, interval: LogInterval): boolean {
  return logError !== undefined && Number.isFinite(logError) && logError >= interval.lo && logError <= interval.hi;
}

/**
 * The index of the variant with the lowest score, ties to the earlier one; -1 when none is finite.
 * bench:plan's leave-one-type-out protocol scores each variant on the held-in types only.
 */
export function chooseVariant(scores: readonly number[]): number {
  let best = -1;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i] as number;
    if (Number.isFinite(s) && (best < 0 || s < (scores[best] as number))) best = i;
  }
  return best;
}
