/**
 * A key's throughput model on a GPU type where it has measured one GPU at most: the cross-type
 * transfer (type-transfer.ts, measured by `npm run bench:plan`) applied to profile points, then
 * fitted to the goodput model's parameters and corrected to the transfer's predictions, so that
 * a configuration there is valued as the transfer predicts it. The planner (planner/plan-types.ts,
 * the key's measured one-GPU points on the target) and the mixed-type simulator's profiles
 * (sim/hetero/key-profiles.ts, its one-GPU compute at Sia's one-GPU ratio) both build it here.
 *
 * Pure and deterministic: no I/O, no clock, no randomness.
 */
import { fitPerfParams } from './fit.js';
import { stepCorrection } from './step-correction.js';
import { fitTypeFactors, transferPredictor, type TransferJob } from './type-transfer.js';
import type { TypeMeasurement } from './type-measurement.js';
import type { PerfParams, ProfilePoint, StepCorrection } from './types.js';

/** Other keys' points on the reference type and the target type (the store's cross-type data). */
export interface OtherKey {
  reference: readonly ProfilePoint[];
  target: readonly ProfilePoint[];
}

/** A transferred model's parameters and its correction to the transfer's predictions. */
export interface TransferredPerf {
  perf: PerfParams;
  correction: StepCorrection;
  /** Other keys the target's factors were learned from. */
  num_keys: number;
}

/** A profile point as the transfer reads it: its optimizer step, with sync = step - micro-step. */
export function asMeasurement(p: ProfilePoint): TypeMeasurement {
  return {
    num_nodes: p.num_nodes,
    num_replicas: p.num_replicas,
    local_bsz: p.local_bsz,
    step_time_s: p.optim_step_time_s,
    sync_time_s: Math.max(p.optim_step_time_s - p.accum_step_time_s, 0),
  };
}

/**
 * The key's model on the target from its `reference` points, its one-GPU points on the target
 * (`targetOneGpu`) and `others`: its multi-GPU step times are predicted at each configuration
 * of `at` with more than one replica, and the throughput model is fitted on those and the
 * one-GPU points. Undefined when the transfer cannot predict (no other key with multi-GPU
 * points on the target, or no one-GPU points on either type).
 */
export function transferredPerf(
  reference: readonly ProfilePoint[],
  targetOneGpu: readonly ProfilePoint[],
  others: readonly OtherKey[],
  at: readonly Omit<ProfilePoint, 'accum_step_time_s' | 'optim_step_time_s'>[],
): TransferredPerf | undefined {
  const learn: TransferJob[] = others.map((o) => ({
    reference: o.reference.map(asMeasurement),
    target: o.target.map(asMeasurement),
  }));
  if (!learn.some((j) => j.target.some((m) => m.num_replicas > 1))) return undefined;
  const factors = fitTypeFactors(learn);
  const predict = transferPredictor(
    { reference: reference.map(asMeasurement), target: targetOneGpu.map(asMeasurement) },
    factors,
  );
  if (!predict) return undefined;
  const points: ProfilePoint[] = [...targetOneGpu];
  for (const c of at) {
    if (c.num_replicas < 2) continue;
    const step_s = predict(c.num_nodes, c.num_replicas, c.local_bsz);
    const one = predict(1, 1, c.local_bsz);
    if (step_s === undefined || one === undefined) continue;
    points.push({
      num_nodes: c.num_nodes,
      num_replicas: c.num_replicas,
      local_bsz: c.local_bsz,
      accum_step_time_s: one,
      optim_step_time_s: step_s,
    });
  }
  const perf = fitPerfParams(points);
  return { perf, correction: stepCorrection(perf, points), num_keys: factors.num_jobs };
}
