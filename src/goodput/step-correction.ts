/**
 * Measured corrections of the throughput model (issue #18). The seven-parameter model of
 * pollux-spec §3.1 does not fit the measured step times closely: fitted on every shape a key's
 * jobs ran, it still errs by tens of percent on some of them, and the policy then sizes jobs by
 * the error. Where a shape (nodes, replicas) was measured, the measurement is the better
 * prediction; the model only carries it across local batch sizes. Pure.
 */
import { shapeKey } from './key-profile.js';
import { accumStepTime_s, optimStepTime_s } from './throughput.js';
import type { PerfParams, ProfilePoint, ShapeFactor, StepCorrection } from './types.js';

/**
 * The correction of `perf` by `points` (the measurements it was fitted on): per shape, the
 * geometric mean of measured / predicted optimizer-step time over the shape's points.
 */
export function stepCorrection(perf: PerfParams, points: readonly ProfilePoint[]): StepCorrection {
  let computeLog = 0;
  let computeCount = 0;
  const byShape = new Map<string, { num_nodes: number; num_replicas: number; log: number; count: number }>();
  for (const p of points) {
    const acc = accumStepTime_s(perf, p.local_bsz);
    if (p.accum_step_time_s > 0 && acc > 0) {
      computeLog += Math.log(p.accum_step_time_s / acc);
      computeCount++;
    }
    const opt = optimStepTime_s(perf, p.num_nodes, p.num_replicas, p.local_bsz);
    if (!(p.optim_step_time_s > 0 && opt > 0)) continue;
    const key = shapeKey(p);
    let entry = byShape.get(key);
    if (!entry) byShape.set(key, (entry = { num_nodes: p.num_nodes, num_replicas: p.num_replicas, log: 0, count: 0 }));
    entry.log += Math.log(p.optim_step_time_s / opt);
    entry.count++;
  }
  const shapes = [...byShape.values()]
    .map((s) => ({ num_nodes: s.num_nodes, num_replicas: s.num_replicas, factor: Math.exp(s.log / s.count) }))
    .sort((a, b) => a.num_replicas - b.num_replicas || a.num_nodes - b.num_nodes);
  return { compute: computeCount > 0 ? Math.exp(computeLog / computeCount) : 1, shapes };
}

/**
 * Factor of the optimizer-step time at (num_nodes, num_replicas): the measured one at that shape;
 * else interpolated in log(replicas) between the nearest measured shapes of the same kind (one
 * node, or several), and the nearest one's beyond them; 1 when no shape of that kind was measured.
 */
export function optimFactor(correction: StepCorrection, num_nodes: number, num_replicas: number): number {
  const multi = num_nodes > 1;
  let below: ShapeFactor | undefined;
  let above: ShapeFactor | undefined;
  for (const s of correction.shapes) {
    if (s.num_nodes > 1 !== multi) continue;
    if (s.num_replicas === num_replicas && s.num_nodes === num_nodes) return s.factor;
    if (s.num_replicas <= num_replicas) below = s;
    else if (!above) above = s;
  }
  if (!below) return above?.factor ?? 1;
  if (!above || above.num_replicas === below.num_replicas) return below.factor;
  const t = Math.log(num_replicas / below.num_replicas) / Math.log(above.num_replicas / below.num_replicas);
  return Math.exp((1 - t) * Math.log(below.factor) + t * Math.log(above.factor));
}

/** Samples per second of a configuration with the fitted step times scaled by `correction`. */
export function correctedThroughput(perf: PerfParams, correction: StepCorrection, num_nodes: number, num_replicas: number, local_bsz: number, accum_steps: number): number {
  const accum_s = accumStepTime_s(perf, local_bsz) * correction.compute;
  const optim_s = optimStepTime_s(perf, num_nodes, num_replicas, local_bsz) * optimFactor(correction, num_nodes, num_replicas);
  return (num_replicas * local_bsz * (accum_steps + 1)) / (accum_steps * accum_s + optim_s);
}
