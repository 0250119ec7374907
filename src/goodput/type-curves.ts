/**
 * Batch and shape curves through a job's measured rows on one GPU type: the interpolation that
 * the cross-type transfer (type-transfer.ts) and its contention model (type-contention.ts) read
 * a job's measurements through. Pure and deterministic: no I/O, no clock, no randomness.
 */
import type { TypeMeasurement } from './type-measurement.js';

/** A data-parallel shape: replicas over nodes. */
export interface Shape {
  num_nodes: number;
  num_replicas: number;
}

/** Step-time predictor of one job on a type (s); undefined where it cannot predict. */
export type StepPredictor = (num_nodes: number, num_replicas: number, local_bsz: number) => number | undefined;

/** The shortest time a curve holds (s): log-log interpolation needs positive times. */
export const MIN_TIME_S = 1e-6;

/** Micro-step compute time of a row: the step minus its measured synchronization (s). */
export function computeTime_s(m: TypeMeasurement): number {
  return Math.max(m.step_time_s - m.sync_time_s, MIN_TIME_S);
}

/**
 * A batch -> time curve through measured points: piecewise linear in log-log between the
 * measured batches (median of repeats), extended beyond them with the end segment's slope
 * clamped to [0, 1] (a step neither shrinks with the batch nor grows faster than it); flat with
 * one batch. Undefined without points.
 */
export function batchCurve(
  points: readonly { local_bsz: number; time_s: number }[],
): ((local_bsz: number) => number) | undefined {
  const byBatch = new Map<number, number[]>();
  for (const p of points) {
    const list = byBatch.get(p.local_bsz) ?? [];
    list.push(Math.max(p.time_s, MIN_TIME_S));
    byBatch.set(p.local_bsz, list);
  }
  if (byBatch.size === 0) return undefined;
  const sorted = [...byBatch].sort((a, c) => a[0] - c[0]);
  const xs = sorted.map(([b]) => Math.log(b));
  const ys = sorted.map(([, ts]) => Math.log(median(ts)));
  return (local_bsz: number): number => Math.exp(interpolate(xs, ys, Math.log(local_bsz)));
}

function interpolate(xs: readonly number[], ys: readonly number[], x: number): number {
  const n = xs.length;
  if (n === 1) return ys[0] as number;
  let i = 0;
  while (i < n - 2 && x > (xs[i + 1] as number)) i++;
  const x0 = xs[i] as number;
  const x1 = xs[i + 1] as number;
  const y0 = ys[i] as number;
  const y1 = ys[i + 1] as number;
  const slope = (y1 - y0) / (x1 - x0);
  if (x >= x0 && x <= x1) return y0 + slope * (x - x0);
  const outside = Math.min(Math.max(slope, 0), 1);
  return x < x0 ? y0 + outside * (x - x0) : y1 + outside * (x - x1);
}

/** The job's one-GPU compute time (s) on a type as a function of the per-GPU batch; undefined without a one-GPU row. */
export function oneGpuComputeCurve(rows: readonly TypeMeasurement[]): ((local_bsz: number) => number) | undefined {
  return batchCurve(
    rows.filter((m) => m.num_replicas === 1).map((m) => ({ local_bsz: m.local_bsz, time_s: computeTime_s(m) })),
  );
}

/** A shape as a map key. */
export const shapeKey = (s: Shape): string => `${s.num_nodes}x${s.num_replicas}`;

/**
 * A per-row quantity of a job's multi-GPU rows (on the reference type) at the shape nearest to
 * (num_nodes, num_replicas): the same node count if measured, else the nearest in ratio, with
 * the replicas scaled to it and capped at what its nodes held; then the nearest measured replica
 * count; at the batch by {@link batchCurve}. Undefined without multi-GPU rows (or for one replica).
 */
export function shapeCurve(rows: readonly TypeMeasurement[], quantity: (m: TypeMeasurement) => number): StepPredictor {
  const byShape = new Map<string, { shape: Shape; points: { local_bsz: number; time_s: number }[] }>();
  let gpusPerNode = 1;
  for (const m of rows) {
    if (m.num_replicas < 2) continue;
    gpusPerNode = Math.max(
      gpusPerNode,
      m.placement ? Math.max(...m.placement) : Math.ceil(m.num_replicas / m.num_nodes),
    );
    const key = shapeKey(m);
    const entry = byShape.get(key) ?? { shape: { num_nodes: m.num_nodes, num_replicas: m.num_replicas }, points: [] };
    entry.points.push({ local_bsz: m.local_bsz, time_s: quantity(m) });
    byShape.set(key, entry);
  }
  const curves = [...byShape.values()].map(({ shape, points }) => ({
    shape,
    curve: batchCurve(points) as (b: number) => number,
  }));
  const nodeCounts = [...new Set(curves.map((c) => c.shape.num_nodes))];
  return (num_nodes, num_replicas, local_bsz) => {
    if (num_replicas < 2 || nodeCounts.length === 0) return undefined;
    const nodes = nearest(nodeCounts, num_nodes, (a, b) => Math.abs(Math.log(a / b)));
    const replicas = Math.max(
      Math.min(Math.round((num_replicas * nodes) / num_nodes), nodes * gpusPerNode),
      nodes === 1 ? 2 : nodes,
    );
    const candidates = curves.filter((c) => c.shape.num_nodes === nodes);
    const best = nearestBy(candidates, (c) => Math.abs(Math.log(c.shape.num_replicas / replicas)));
    return best?.curve(local_bsz);
  };
}

/** The element of `xs` nearest to `x` by `distance` (the first on ties). */
function nearest(xs: readonly number[], x: number, distance: (a: number, b: number) => number): number {
  return nearestBy(xs, (v) => distance(v, x)) as number;
}

/** The element of `xs` nearest by `distance` (the first on ties); undefined for none. */
export function nearestBy<T>(xs: readonly T[], distance: (v: T) => number): T | undefined {
  let best: T | undefined;
  let bestDistance = Infinity;
  for (const v of xs) {
    const d = distance(v);
    if (d < bestDistance) {
      best = v;
      bestDistance = d;
    }
  }
  return best;
}

/** Mean of a non-empty list. */
export function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/** Median of a non-empty list. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
