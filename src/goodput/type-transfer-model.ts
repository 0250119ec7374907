/**
 * A key's throughput model on a GPU type it has not run on, for the scheduling policy: the
 * planner's cross-type transfer (type-transfer.ts, measured by `npm run bench:plan`) applied to
 * the profile store's points, then fitted to the goodput model's parameters so that the policy
 * values a configuration there as the planner predicts it.
 *
 * Inputs are what a cluster knows without running the key on the target type:
 * - the key's points on a measured (reference) type;
 * - its one-GPU throughput on the target over the reference (Sia's bootstrap ratio); the key's
 *   one-GPU compute on the target is its reference one-GPU compute over that speed-up, so at one
 *   GPU the result equals Sia's ratio rule;
 * - the other keys' points on both types, from which the target's network (and overlap rule) is
 *   learned, as bench:plan learns them from the other applications.
 * Where the transfer cannot predict (no other key measured several GPUs on both types, or the key
 * has no one-GPU and multi-GPU points on the reference), the result is undefined and the caller
 * keeps Sia's ratio rule.
 *
 * Pure and deterministic: no I/O, no clock, no randomness.
 */
import { fitPerfParams } from './fit.js';
import { stepCorrection } from './step-correction.js';
import { fitTypeFactors, transferPredictor, type Shape, type TransferJob } from './type-transfer.js';
import type { TypeMeasurement } from './type-measurement.js';
import type { PerfParams, ProfilePoint, StepCorrection } from './types.js';

/** A profile point as the transfer reads it: step with its sync; sync = optimizer step - micro-step. */
export function pointMeasurement(p: ProfilePoint): TypeMeasurement {
  return { num_nodes: p.num_nodes, num_replicas: p.num_replicas, local_bsz: p.local_bsz, step_time_s: p.optim_step_time_s, sync_time_s: Math.max(p.optim_step_time_s - p.accum_step_time_s, 0) };
}

/** What the transfer reads of one key on the target type. */
export interface ModelTransferInput {
  /** The key's points on its reference (measured) type. */
  reference: readonly ProfilePoint[];
  /** The key's one-GPU samples/s on the target over on the reference; > 0. */
  one_gpu_speedup: number;
  /** Other keys' points on the reference and on the target type. */
  others: readonly { reference: readonly ProfilePoint[]; target: readonly ProfilePoint[] }[];
  /** (nodes, replicas) configurations of the target type to fit the model at. */
  shapes: readonly Shape[];
}

/** A transferred model's parameters and its correction to the transfer's predictions at `shapes`. */
export interface TransferredPerf {
  perf: PerfParams;
  correction: StepCorrection;
  /** Other keys the target's network was learned from (>= 1). */
  num_keys: number;
}

/**
 * The key's throughput model on the target type (see the file comment), fitted to the transfer's
 * step-time predictions at every shape of `input.shapes` and every per-GPU batch the key measured
 * on the reference, and corrected to them there (goodput/step-correction.ts). Undefined where the
 * transfer cannot predict.
 */
export function transferredPerf(input: ModelTransferInput): TransferredPerf | undefined {
  if (!(input.one_gpu_speedup > 0)) return undefined;
  const reference = input.reference.map(pointMeasurement);
  const others: TransferJob[] = input.others.map((o) => ({ reference: o.reference.map(pointMeasurement), target: o.target.map(pointMeasurement) }));
  const factors = fitTypeFactors(others);
  if (factors.num_jobs === 0) return undefined;
  // The key's one-GPU compute on the target: its reference compute at Sia's one-GPU ratio.
  const targetOneGpu = reference.filter((m) => m.num_replicas === 1).map((m) => ({ ...m, step_time_s: (m.step_time_s - m.sync_time_s) / input.one_gpu_speedup, sync_time_s: 0 }));
  const predict = transferPredictor({ reference, target: targetOneGpu }, factors);
  if (!predict) return undefined;
  const batches = [...new Set(reference.map((m) => m.local_bsz))].sort((a, b) => a - b);
  const points: ProfilePoint[] = [];
  for (const shape of input.shapes) {
    for (const b of batches) {
      const step_s = predict(shape.num_nodes, shape.num_replicas, b);
      const compute_s = predict(1, 1, b);
      if (step_s === undefined || compute_s === undefined) continue;
      points.push({ num_nodes: shape.num_nodes, num_replicas: shape.num_replicas, local_bsz: b, accum_step_time_s: Math.min(compute_s, step_s), optim_step_time_s: step_s });
    }
  }
  if (!points.some((p) => p.num_replicas > 1)) return undefined;
  const perf = fitPerfParams(points);
  return { perf, correction: stepCorrection(perf, points), num_keys: factors.num_jobs };
}
