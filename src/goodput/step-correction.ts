/**
 * Measured corrections of the throughput model. The seven-parameter model of
 * pollux-spec §3.1 does not fit the measured step times closely: fitted on every configuration a
 * key's jobs ran, it still errs by tens of percent on some shapes, and within one shape by up to
 * about 10% (standard deviation) from one local batch to another. The policy then sizes jobs, and
 * jobs choose their batch, by the error. Where a configuration was measured, the measurement is
 * the better prediction; the model only carries it to configurations not measured. Pure.
 */
import { shapeKey } from './key-profile.js';
import { accumStepTime_s, optimStepTime_s } from './throughput.js';
import type { BatchFactor, PerfParams, ProfilePoint, ShapeFactor, StepCorrection } from './types.js';

/** Sums of log ratios per local batch. */
type LogSums = Map<number, { log: number; count: number }>;

/**
 * The correction of `perf` by `points` (the measurements it was fitted on): per shape and local
 * batch, measured / predicted optimizer-step time; per local batch, measured / predicted
 * micro-step time over every shape. Several points of one configuration average geometrically.
 */
export function stepCorrection(perf: PerfParams, points: readonly ProfilePoint[]): StepCorrection {
  const compute: LogSums = new Map();
  const byShape = new Map<string, { num_nodes: number; num_replicas: number; sums: LogSums }>();
  for (const p of points) {
    const acc = accumStepTime_s(perf, p.local_bsz);
    if (p.accum_step_time_s > 0 && acc > 0) add(compute, p.local_bsz, Math.log(p.accum_step_time_s / acc));
    const opt = optimStepTime_s(perf, p.num_nodes, p.num_replicas, p.local_bsz);
    if (!(p.optim_step_time_s > 0 && opt > 0)) continue;
    const key = shapeKey(p);
    let entry = byShape.get(key);
    if (!entry) byShape.set(key, (entry = { num_nodes: p.num_nodes, num_replicas: p.num_replicas, sums: new Map() }));
    add(entry.sums, p.local_bsz, Math.log(p.optim_step_time_s / opt));
  }
  const shapes = [...byShape.values()]
    .map((s) => ({ num_nodes: s.num_nodes, num_replicas: s.num_replicas, by_batch: factors(s.sums) }))
    .sort((a, b) => a.num_replicas - b.num_replicas || a.num_nodes - b.num_nodes);
  return { compute: factors(compute), shapes };
}

function add(sums: LogSums, local_bsz: number, log: number): void {
  const e = sums.get(local_bsz);
  if (e) {
    e.log += log;
    e.count++;
  } else sums.set(local_bsz, { log, count: 1 });
}

function factors(sums: LogSums): BatchFactor[] {
  return [...sums]
    .map(([local_bsz, e]) => ({ local_bsz, factor: Math.exp(e.log / e.count) }))
    .sort((a, b) => a.local_bsz - b.local_bsz);
}

/**
 * Interpolates `at` in log(position) between `below` and `above`, the items nearest `x` on each
 * side; the one present when only one is; `none` when neither is.
 */
function between<T>(
  below: T | undefined,
  above: T | undefined,
  position: (item: T) => number,
  at: (item: T) => number,
  x: number,
  none: number,
): number {
  if (below === undefined) return above === undefined ? none : at(above);
  if (above === undefined || position(below) === x) return at(below);
  const t = Math.log(x / position(below)) / Math.log(position(above) / position(below));
  return Math.exp((1 - t) * Math.log(at(below)) + t * Math.log(at(above)));
}

/** {@link between} the items of `items` (sorted by position) nearest `x`. */
function interpolateLog<T>(
  items: readonly T[],
  position: (item: T) => number,
  at: (item: T) => number,
  x: number,
  none: number,
): number {
  let below: T | undefined;
  let above: T | undefined;
  for (const item of items) {
    if (position(item) <= x) below = item;
    else if (above === undefined) above = item;
  }
  return between(below, above, position, at, x, none);
}

const batchOf = (f: BatchFactor): number => f.local_bsz;
const factorOf = (f: BatchFactor): number => f.factor;
const replicasOf = (s: ShapeFactor): number => s.num_replicas;

/** Factor of the micro-step time at `local_bsz`: interpolated in log(local batch), 1 when nothing was measured. */
export function computeFactor(correction: StepCorrection, local_bsz: number): number {
  return interpolateLog(correction.compute, batchOf, factorOf, local_bsz, 1);
}

/**
 * Factor of the optimizer-step time at (num_nodes, num_replicas, local_bsz). Each measured shape
 * gives its factor at `local_bsz` interpolated in log(local batch) between its measured batches
 * (the nearest one's beyond them). The shape itself when measured; else interpolated in
 * log(replicas) between the nearest measured shapes of the same kind (one node, or several), the
 * nearest one's beyond them; 1 when no shape of that kind was measured.
 */
export function optimFactor(
  correction: StepCorrection,
  num_nodes: number,
  num_replicas: number,
  local_bsz: number,
): number {
  const multi = num_nodes > 1;
  const atBatch = (s: ShapeFactor): number => interpolateLog(s.by_batch, batchOf, factorOf, local_bsz, 1);
  // One pass that builds no array: this runs for every configuration the batch optimizer tries.
  let below: ShapeFactor | undefined;
  let above: ShapeFactor | undefined;
  for (const s of correction.shapes) {
    if (s.num_nodes > 1 !== multi) continue;
    if (s.num_replicas === num_replicas && s.num_nodes === num_nodes) return atBatch(s);
    if (s.num_replicas <= num_replicas) below = s;
    else if (above === undefined) above = s;
  }
  return between(below, above, replicasOf, atBatch, num_replicas, 1);
}

/** Samples per second of a configuration with the fitted step times scaled by `correction`. */
export function correctedThroughput(
  perf: PerfParams,
  correction: StepCorrection,
  num_nodes: number,
  num_replicas: number,
  local_bsz: number,
  accum_steps: number,
): number {
  const accum_s = accumStepTime_s(perf, local_bsz) * computeFactor(correction, local_bsz);
  const optim_s =
    optimStepTime_s(perf, num_nodes, num_replicas, local_bsz) *
    optimFactor(correction, num_nodes, num_replicas, local_bsz);
  return (num_replicas * local_bsz * (accum_steps + 1)) / (accum_steps * accum_s + optim_s);
}
