/**
 * Calibrated intervals for the planner's predictions: an 80% interval of a prediction is the
 * prediction times the 10th and 90th percentiles of measured / predicted on data the prediction
 * did not see (other GPU types, other applications). bench:plan measures how often such an
 * interval contains a left-out measurement (docs/planner.md). Pure and deterministic.
 */

/** An interval of log(measured / predicted). Invariant: lo <= hi. */
export interface LogInterval {
  lo: number;
  hi: number;
}

/** The share of measurements an interval of this module aims to contain. */
export const INTERVAL_COVERAGE = 0.8;

/** The q-quantile (0 <= q <= 1) of `xs` by linear interpolation between order statistics; NaN when empty. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
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

/** Whether a log error lies within the interval (an undefined error, a row not predicted, does not). */
export function insideInterval(logError: number | undefined, interval: LogInterval): boolean {
  return logError !== undefined && Number.isFinite(logError) && logError >= interval.lo && logError <= interval.hi;
}

/** The bounds of a positive prediction under the interval: [x e^lo, x e^hi]. */
export function applyInterval(x: number, interval: LogInterval): [number, number] {
  return [x * Math.exp(interval.lo), x * Math.exp(interval.hi)];
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
