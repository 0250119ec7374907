/**
 * Measured corrections of the throughput model. The seven-parameter model of
 * pollux-spec §3.1 does not fit the measured step times closely: fitted on every configuration a
 * key's jobs ran, it still errs by tens of percent on some shapes, and within one shape by up to
 * about 10% (standard deviation) from one local batch to another. The policy then sizes jobs, and
 * jobs choose their batch, by the error. Where a configuration was measured, the measurement is
 * the better prediction; the model only carries it to configurations not measured. Pure.
 */
import { shapeKey } from './key-profile.js';
import { accumStepTime_s, optimStepTime_s, samplesPerSecond } from './throughput.js';
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

/** f at x, interpolated in log(x) between (x0, f0) and (x1, f1) (log-log), 0 < x0 < x1. */
function logLerp(x0: number, f0: number, x1: number, f1: number, x: number): number {
  const t = Math.log(x / x0) / Math.log(x1 / x0);
  return Math.exp((1 - t) * Math.log(f0) + t * Math.log(f1));
}

/**
 * The factor of `items` (sorted by local batch, each once) at `local_bsz`: interpolated in
 * log(local batch) between the nearest measured batches on each side, the nearest one's beyond
 * them, 1 when nothing was measured. Written out for BatchFactor (no accessor callbacks): the
 * batch optimizer calls it for every candidate of every job, and the generic form was a tenth
 * of a simulated day at 16,384 GPUs (bench:scale).
 */
function factorAtBatch(items: readonly BatchFactor[], local_bsz: number): number {
  let below: BatchFactor | undefined;
  let above: BatchFactor | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.local_bsz <= local_bsz) below = item;
    else {
      above = item; // sorted: no later item is below
      break;
    }
  }
  if (below === undefined) return above === undefined ? 1 : above.factor;
  if (above === undefined || below.local_bsz === local_bsz) return below.factor;
  return logLerp(below.local_bsz, below.factor, above.local_bsz, above.factor, local_bsz);
}

/** Factor of the micro-step time at `local_bsz`: interpolated in log(local batch), 1 when nothing was measured. */
export function computeFactor(correction: StepCorrection, local_bsz: number): number {
  return factorAtBatch(correction.compute, local_bsz);
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
  // One pass that builds no array: this runs for every configuration the batch optimizer tries.
  let below: ShapeFactor | undefined;
  let above: ShapeFactor | undefined;
  for (const s of correction.shapes) {
    if (s.num_nodes > 1 !== multi) continue;
    if (s.num_replicas === num_replicas && s.num_nodes === num_nodes) return factorAtBatch(s.by_batch, local_bsz);
    if (s.num_replicas <= num_replicas) below = s;
    else {
      above = s; // sorted by replicas: no later shape of this kind is below
      break;
    }
  }
  if (below === undefined) return above === undefined ? 1 : factorAtBatch(above.by_batch, local_bsz);
  if (above === undefined || below.num_replicas === num_replicas) return factorAtBatch(below.by_batch, local_bsz);
  const f0 = factorAtBatch(below.by_batch, local_bsz);
  const f1 = factorAtBatch(above.by_batch, local_bsz);
  return logLerp(below.num_replicas, f0, above.num_replicas, f1, num_replicas);
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
  return samplesPerSecond(num_replicas, local_bsz, accum_steps, accum_s, optim_s);
}
