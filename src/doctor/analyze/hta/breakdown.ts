import { KIND_CODE } from '../../parse/kineto/kernel-kind.js';
import type { PreparedRank, MergedIntervals } from './prepare.js';
import { mergeIntervals, totalLength } from './prepare.js';

/** HTA `get_temporal_breakdown` for one rank; times in µs, percentages rounded to 2 decimals. */
export interface TemporalBreakdown {
  readonly rank: number;
  readonly idle_us: number;
  readonly compute_us: number;
  readonly non_compute_us: number;
  /** From the first GPU activity's start to the last one's end. */
  readonly kernel_time_us: number;
  readonly idle_pct: number;
  readonly compute_pct: number;
  readonly non_compute_pct: number;
}

/** Rounds half to even at `digits` decimals, like pandas/numpy `round`. */
export function roundHalfEven(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  const y = x * f;
  const r = Math.round(y);
  // Math.round rounds .5 up; numpy rounds .5 to even.
  const rounded = Math.abs(y - Math.trunc(y)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  return rounded / f;
}

function mergedOfKind(p: PreparedRank, kind: number): MergedIntervals {
  const g = p.source.gpu;
  const kinds = g.kind.view();
  return mergeIntervals(
    p.kept.filter((i) => kinds[i] === kind),
    g.ts.view(),
    g.end.view(),
  );
}

/** Pure. Returns undefined when the rank has no GPU activity (e.g. a CPU-only trace). */
export function temporalBreakdown(p: PreparedRank): TemporalBreakdown | undefined {
  if (p.kept.length === 0) return undefined;
  const g = p.source.gpu;
  const all = mergeIntervals(p.kept, g.ts.view(), g.end.view());
  const kernelTime = all.end[all.end.length - 1]! - all.start[0]!;
  const idle = kernelTime - totalLength(all);
  const compute = totalLength(mergedOfKind(p, KIND_CODE.computation));
  const nonCompute = kernelTime - compute - idle;
  const pct = (x: number) => (kernelTime === 0 ? 0 : roundHalfEven((100 * x) / kernelTime, 2));
  return {
    rank: p.source.rank,
    idle_us: idle,
    compute_us: compute,
    non_compute_us: nonCompute,
    kernel_time_us: kernelTime,
    idle_pct: pct(idle),
    compute_pct: pct(compute),
    non_compute_pct: pct(nonCompute),
  };
}

/**
 * HTA `get_comm_comp_overlap`: the share of (merged) communication time during which some
 * computation kernel also runs, in percent rounded to 2 decimals; null without communication.
 */
export function commCompOverlapPct(p: PreparedRank): number | null {
  const comm = mergedOfKind(p, KIND_CODE.communication);
  const commTotal = totalLength(comm);
  if (comm.start.length === 0 || commTotal === 0) return null;
  const comp = mergedOfKind(p, KIND_CODE.computation);
  let overlap = 0;
  let j = 0;
  for (let i = 0; i < comm.start.length; i++) {
    const a = comm.start[i]!;
    const b = comm.end[i]!;
    while (j < comp.start.length && comp.end[j]! <= a) j++;
    for (let k = j; k < comp.start.length && comp.start[k]! < b; k++) {
      const lo = Math.max(a, comp.start[k]!);
      const hi = Math.min(b, comp.end[k]!);
      if (hi > lo) overlap += hi - lo;
    }
  }
  return roundHalfEven((100 * overlap) / commTotal, 2);
}

const KIND_ORDER = ['COMPUTATION', 'COMMUNICATION', 'MEMORY'] as const;
const KIND_CODES = [KIND_CODE.computation, KIND_CODE.communication, KIND_CODE.memory];

/**
 * Time (µs) per combination of concurrently running kernel kinds, e.g. "COMPUTATION overlapping
 * COMMUNICATION", as HTA's `kernel_type_breakdown` with memory kernels included. Pure; adds into `into`.
 */
export function kernelTypeTimes(p: PreparedRank, into: Map<string, number> = new Map()): Map<string, number> {
  const points: { t: number; delta: number }[] = [];
  KIND_CODES.forEach((code, bitIndex) => {
    const m = mergedOfKind(p, code);
    for (let i = 0; i < m.start.length; i++) {
      points.push({ t: m.start[i]!, delta: 1 << bitIndex }, { t: m.end[i]!, delta: -(1 << bitIndex) });
    }
  });
  points.sort((a, b) => a.t - b.t);
  let running = 0;
  for (let i = 0; i < points.length - 1; i++) {
    running += points[i]!.delta;
    const span = points[i + 1]!.t - points[i]!.t;
    if (running > 0 && span > 0) {
      const label = KIND_ORDER.filter((_, b) => running & (1 << b)).join(' overlapping ');
      into.set(label, (into.get(label) ?? 0) + span);
    }
  }
  return into;
}

/** One row of the kernel-type table: summed over ranks, percentage of all GPU busy time (1 decimal). */
export interface KernelTypeRow {
  readonly kernel_type: string;
  readonly time_us: number;
  readonly pct: number;
}

/** Sorted by time, largest first. Pure. */
export function kernelTypeTable(times: ReadonlyMap<string, number>): KernelTypeRow[] {
  let total = 0;
  for (const v of times.values()) total += v;
  return [...times.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([kernel_type, time_us]) => ({
      kernel_type,
      time_us,
      pct: total === 0 ? 0 : roundHalfEven((100 * time_us) / total, 1),
    }));
}
