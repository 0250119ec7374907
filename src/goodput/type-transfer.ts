/**
 * Cross-GPU-type throughput prediction: a job's multi-GPU step time on a type where it has run
 * only on one GPU, from its profile on another (the reference) type and what the cluster has
 * learned of the target type from other jobs. Measured by `npm run bench:plan` (docs/planner.md).
 *
 * Why not Sia's rule (thr(N, T) = thr(1, T) / thr(1, ref) x thr(N, ref), {@link oneGpuRatioStep_s}):
 * it scales the whole step by the one-GPU compute ratio, so it carries the reference network's
 * share of the step over to a type whose network and compute differ (A100 nodes with NVLink and
 * InfiniBand beside T4 nodes on Ethernet). Here the two parts of a measured step (step = compute
 * + the synchronization left visible, as the traces measure it) are transferred separately:
 * - compute: the job's own one-GPU micro-step time on the target type at that per-GPU batch
 *   (log-log interpolation between its measured batches), times the target type's compute factor
 *   of the shape (how much slower or faster a micro-step is on that many GPUs and nodes than on
 *   one GPU, as the other jobs measured it on the target);
 * - synchronization: the job's own sync time on the reference type at the nearest measured shape
 *   (what its gradient size costs on a known network), times the target type's sync factor of
 *   the shape (geometric mean over the other jobs of their target / reference sync ratio there).
 * A shape is (nodes, replicas); one the other jobs never measured takes the factors of the
 * nearest learned shape with the same kind of link (several nodes or one), else 1.
 *
 * Pure and deterministic: no I/O, no clock, no randomness.
 */
import type { TypeMeasurement } from './type-measurement.js';

/** A job's data on two types: its reference profile and its rows on the target type. */
export interface TransferJob {
  reference: readonly TypeMeasurement[];
  /** Rows on the target type: one-GPU rows for a job being predicted; all its rows when learning. */
  target: readonly TypeMeasurement[];
}

/** A data-parallel shape: replicas over nodes. */
export interface Shape {
  num_nodes: number;
  num_replicas: number;
}

/** Factors of one shape on the target type, learned from other jobs. Invariant: both > 0. */
export interface ShapeFactors extends Shape {
  /** Multi-GPU micro-step time over one-GPU micro-step time at the same per-GPU batch. */
  compute: number;
  /** Sync time on the target over the same job's sync time on the reference at the nearest shape. */
  sync: number;
  /** Jobs that measured this shape. */
  num_jobs: number;
}

/** What the cluster has learned of a target type: factors per measured shape, sorted by (nodes, replicas). */
export interface TypeFactors {
  shapes: readonly ShapeFactors[];
  /** Jobs whose target measurements were learned from. */
  num_jobs: number;
}

/** Step-time predictor of one job on the target type (s); undefined where it cannot predict. */
export type StepPredictor = (num_nodes: number, num_replicas: number, local_bsz: number) => number | undefined;

const MIN_TIME_S = 1e-6;

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
export function batchCurve(points: readonly { local_bsz: number; time_s: number }[]): ((local_bsz: number) => number) | undefined {
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
  return batchCurve(rows.filter((m) => m.num_replicas === 1).map((m) => ({ local_bsz: m.local_bsz, time_s: computeTime_s(m) })));
}

const shapeKey = (s: Shape): string => `${s.num_nodes}x${s.num_replicas}`;

/**
 * The job's measured sync time (s) on the reference type at the shape nearest to (num_nodes,
 * num_replicas): the same node count if measured, else the nearest in ratio, with the replicas
 * scaled to it and capped at what its nodes held; then the nearest measured replica count;
 * at the batch by {@link batchCurve}. Undefined without multi-GPU rows (or for one replica).
 */
export function referenceSyncCurve(rows: readonly TypeMeasurement[]): StepPredictor {
  const byShape = new Map<string, { shape: Shape; points: { local_bsz: number; time_s: number }[] }>();
  let gpusPerNode = 1;
  for (const m of rows) {
    if (m.num_replicas < 2) continue;
    gpusPerNode = Math.max(gpusPerNode, m.placement ? Math.max(...m.placement) : Math.ceil(m.num_replicas / m.num_nodes));
    const key = shapeKey(m);
    const entry = byShape.get(key) ?? { shape: { num_nodes: m.num_nodes, num_replicas: m.num_replicas }, points: [] };
    entry.points.push({ local_bsz: m.local_bsz, time_s: m.sync_time_s });
    byShape.set(key, entry);
  }
  const curves = [...byShape.values()].map(({ shape, points }) => ({ shape, curve: batchCurve(points) as (b: number) => number }));
  const nodeCounts = [...new Set(curves.map((c) => c.shape.num_nodes))];
  return (num_nodes, num_replicas, local_bsz) => {
    if (num_replicas < 2 || nodeCounts.length === 0) return undefined;
    const nodes = nearest(nodeCounts, num_nodes, (a, b) => Math.abs(Math.log(a / b)));
    const replicas = Math.max(Math.min(Math.round((num_replicas * nodes) / num_nodes), nodes * gpusPerNode), nodes === 1 ? 2 : nodes);
    const candidates = curves.filter((c) => c.shape.num_nodes === nodes);
    const best = nearestBy(candidates, (c) => Math.abs(Math.log(c.shape.num_replicas / replicas)));
    return best?.curve(local_bsz);
  };
}

/** The element of `xs` nearest to `x` by `distance` (the first on ties). */
function nearest(xs: readonly number[], x: number, distance: (a: number, b: number) => number): number {
  return nearestBy(xs, (v) => distance(v, x)) as number;
}

function nearestBy<T>(xs: readonly T[], distance: (v: T) => number): T | undefined {
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

/**
 * Learns the target type's factors per shape from `jobs` (other jobs, with their multi-GPU rows
 * on the target): per job and shape, the median over its rows of measured compute / its one-GPU
 * compute at that batch, and of log(target sync / its reference sync at the nearest shape); per
 * shape, the median over jobs of the first and the exponential of the mean of the second. Jobs
 * without a one-GPU target row are skipped; jobs without reference multi-GPU rows give compute
 * factors only. Pure and deterministic.
 */
export function learnTypeFactors(jobs: readonly TransferJob[]): TypeFactors {
  const compute = new Map<string, number[]>();
  const sync = new Map<string, number[]>();
  const shapes = new Map<string, Shape>();
  let numJobs = 0;
  for (const job of jobs) {
    const curve = oneGpuComputeCurve(job.target);
    if (!curve) continue;
    const refSync = referenceSyncCurve(job.reference);
    const jobCompute = new Map<string, number[]>();
    const jobSync = new Map<string, number[]>();
    for (const m of job.target) {
      if (m.num_replicas < 2) continue;
      const key = shapeKey(m);
      shapes.set(key, { num_nodes: m.num_nodes, num_replicas: m.num_replicas });
      push(jobCompute, key, computeTime_s(m) / curve(m.local_bsz));
      const reference = refSync(m.num_nodes, m.num_replicas, m.local_bsz);
      if (reference !== undefined) push(jobSync, key, Math.log(Math.max(m.sync_time_s, MIN_TIME_S) / Math.max(reference, MIN_TIME_S)));
    }
    if (jobCompute.size === 0) continue;
    numJobs++;
    for (const [key, ratios] of jobCompute) push(compute, key, median(ratios));
    for (const [key, logs] of jobSync) push(sync, key, median(logs));
  }
  const learned = [...shapes.entries()].map(([key, shape]): ShapeFactors => {
    const logs = sync.get(key);
    const perJob = compute.get(key) as number[];
    return { ...shape, compute: median(perJob), sync: logs ? Math.exp(mean(logs)) : 1, num_jobs: perJob.length };
  });
  learned.sort((a, b) => a.num_nodes - b.num_nodes || a.num_replicas - b.num_replicas);
  return { shapes: learned, num_jobs: numJobs };
}

/**
 * The factors for `shape`: learned there, else at the nearest learned shape with the same kind of
 * link (one node or several; nearest in node ratio, then replica ratio), else 1 and 1.
 */
export function factorsAt(factors: TypeFactors, shape: Shape): { compute: number; sync: number } {
  const multiNode = shape.num_nodes > 1;
  const sameLink = factors.shapes.filter((s) => s.num_nodes > 1 === multiNode);
  const best = nearestBy(sameLink, (s) => 1e3 * Math.abs(Math.log(s.num_nodes / shape.num_nodes)) + Math.abs(Math.log(s.num_replicas / shape.num_replicas)));
  return best ? { compute: best.compute, sync: best.sync } : { compute: 1, sync: 1 };
}

/**
 * The job's step-time predictor on the target type from its reference profile and its one-GPU
 * target rows (its multi-GPU target rows, if any, are not read): one GPU, its own measured
 * compute; more, compute x the shape's compute factor + its reference sync x the shape's sync
 * factor. Undefined when the job has no one-GPU row on the target. Pure.
 */
export function transferPredictor(job: TransferJob, factors: TypeFactors): StepPredictor | undefined {
  const curve = oneGpuComputeCurve(job.target);
  if (!curve) return undefined;
  const refSync = referenceSyncCurve(job.reference);
  return (num_nodes, num_replicas, local_bsz) => {
    if (num_replicas < 2) return curve(local_bsz);
    const reference = refSync(num_nodes, num_replicas, local_bsz);
    if (reference === undefined) return undefined;
    const f = factorsAt(factors, { num_nodes, num_replicas });
    return curve(local_bsz) * f.compute + reference * f.sync;
  };
}

/**
 * Sia's one-GPU-ratio rule (the baseline): the step time of `m` (a target-type configuration)
 * as thr(N, T) = thr(1, T) / thr(1, ref) x thr(N, ref), from the reference row of the same
 * placement (or, for rows with counts only, the same counts) and the one-GPU rows of both types,
 * all at m's per-GPU batch. Undefined where any of the three is not measured.
 */
export function oneGpuRatioStep_s(m: TypeMeasurement, reference: readonly TypeMeasurement[], targetOneGpu: readonly TypeMeasurement[]): number | undefined {
  const sameConfig = (r: TypeMeasurement): boolean =>
    r.local_bsz === m.local_bsz && (m.placement && r.placement ? r.placement.join(',') === m.placement.join(',') : r.num_nodes === m.num_nodes && r.num_replicas === m.num_replicas);
  const refN = reference.find(sameConfig);
  const ref1 = reference.find((r) => r.num_replicas === 1 && r.local_bsz === m.local_bsz);
  const target1 = targetOneGpu.find((r) => r.num_replicas === 1 && r.local_bsz === m.local_bsz);
  if (!refN || !ref1 || !target1) return undefined;
  // Per-replica throughput scales with the one-GPU throughput ratio, i.e. step times scale with the one-GPU step ratio.
  return (refN.step_time_s * target1.step_time_s) / ref1.step_time_s;
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/** Median of a non-empty list. */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
