import type { KinetoRank } from '../../parse/kineto/kineto-collector.js';

/** One rank after HTA's loading rules, ready for the analyses. */
export interface PreparedRank {
  readonly source: KinetoRank;
  /** Indices into `source.gpu` of the GPU activities kept, sorted by start time (stable). */
  readonly kept: readonly number[];
  /** Kept host runtime event index by correlation id. */
  readonly hostByCorrelation: ReadonlyMap<number, number>;
  /** Profiler step iterations analysed (the last, possibly incomplete, step is excluded). */
  readonly iterations: readonly number[];
}

/**
 * Applies HTA's `_filter_irrelevant_gpu_kernels`: when the traces carry at least two distinct
 * `ProfilerStep` names, host events starting at or after the last step's start are dropped (that
 * step is usually cut short by the profiler), and GPU activities are kept only when a kept host
 * event launched them (same correlation id). With fewer steps everything is kept.
 * Pure; `distinctStepNames` is counted over all ranks, as HTA's shared symbol table does.
 */
export function prepareRank(r: KinetoRank, distinctStepNames: number): PreparedRank {
  const filter = distinctStepNames >= 2;
  let lastStart = Number.POSITIVE_INFINITY;
  if (filter) {
    lastStart = Number.NEGATIVE_INFINITY;
    for (const s of r.steps) lastStart = Math.max(lastStart, s.ts_us);
    if (r.steps.length === 0) {
      // HTA falls back to the earliest host event, which keeps nothing.
      lastStart = Number.POSITIVE_INFINITY;
      for (const t of r.host.ts.view()) lastStart = Math.min(lastStart, t);
    }
  }
  const hostByCorrelation = new Map<number, number>();
  const hts = r.host.ts.view();
  const hcorr = r.host.correlation.view();
  for (let i = 0; i < hts.length; i++) {
    if (hts[i]! < lastStart && !hostByCorrelation.has(hcorr[i]!)) hostByCorrelation.set(hcorr[i]!, i);
  }
  const gts = r.gpu.ts.view();
  const gcorr = r.gpu.correlation.view();
  const kept: number[] = [];
  for (let i = 0; i < gts.length; i++) {
    if (!filter || hostByCorrelation.has(gcorr[i]!)) kept.push(i);
  }
  kept.sort((a, b) => gts[a]! - gts[b]!);
  const iterations = [...new Set(r.steps.filter((s) => s.ts_us < lastStart).map((s) => s.iteration))].sort(
    (a, b) => a - b,
  );
  return { source: r, kept, hostByCorrelation, iterations };
}

/** Merged (non-overlapping) busy intervals, as HTA's `merge_kernel_intervals`. */
export interface MergedIntervals {
  readonly start: number[];
  readonly end: number[];
}

/**
 * Merges intervals given in start order: a new group starts only when an interval begins strictly
 * after the latest end seen so far, so touching intervals merge. Pure.
 */
export function mergeIntervals(order: readonly number[], ts: Float64Array, end: Float64Array): MergedIntervals {
  const start: number[] = [];
  const ends: number[] = [];
  let maxEnd = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    const s = ts[i]!;
    const e = end[i]!;
    if (k === 0 || s > maxEnd) {
      start.push(s);
      ends.push(e);
    } else if (e > ends[ends.length - 1]!) {
      ends[ends.length - 1] = e;
    }
    if (e > maxEnd) maxEnd = e;
  }
  return { start, end: ends };
}

/** Total length of merged intervals (µs). */
export function totalLength(m: MergedIntervals): number {
  let sum = 0;
  for (let i = 0; i < m.start.length; i++) sum += m.end[i]! - m.start[i]!;
  return sum;
}
