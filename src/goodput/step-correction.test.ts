import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goodputOf } from './optimize.js';
import { optimFactor, stepCorrection } from './step-correction.js';
import { accumStepTime_s, optimStepTime_s, throughput } from './throughput.js';
import type { GoodputModel, PerfParams, ProfilePoint } from './types.js';

const perf: PerfParams = { alpha_c: 0.01, beta_c: 0.001, alpha_n: 0.05, beta_n: 0.002, alpha_r: 0.02, beta_r: 0.001, gamma: 1 };
const close = (a: number, b: number, tol = 1e-9): void => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} != ${b}`);

/** A measurement `optimFactor` times slower than `perf` predicts at that shape (compute `computeFactor`). */
function measured(num_nodes: number, num_replicas: number, local_bsz: number, optimFactorValue: number, computeFactor = 1): ProfilePoint {
  return {
    num_nodes, num_replicas, local_bsz,
    accum_step_time_s: accumStepTime_s(perf, local_bsz) * computeFactor,
    optim_step_time_s: optimStepTime_s(perf, num_nodes, num_replicas, local_bsz) * optimFactorValue,
  };
}

test('a measured shape is corrected by its own measurement, averaged geometrically over its points', () => {
  const c = stepCorrection(perf, [measured(2, 8, 32, 2), measured(2, 8, 64, 0.5), measured(1, 4, 32, 1.5, 1.2)]);
  close(optimFactor(c, 2, 8), 1);
  close(optimFactor(c, 1, 4), 1.5);
  close(c.compute, 1.2 ** (1 / 3));
});

test('unmeasured shapes interpolate in log(replicas) within their kind, hold the nearest beyond, and default to 1', () => {
  const c = stepCorrection(perf, [measured(2, 8, 32, 1.2), measured(8, 32, 32, 1.8), measured(1, 2, 32, 0.9)]);
  close(optimFactor(c, 4, 16), Math.exp(0.5 * Math.log(1.2) + 0.5 * Math.log(1.8)));
  close(optimFactor(c, 16, 64), 1.8);
  close(optimFactor(c, 2, 6), 1.2);
  // One-node shapes never borrow the multi-node factors.
  close(optimFactor(c, 1, 4), 0.9);
  close(optimFactor(stepCorrection(perf, [measured(1, 2, 32, 0.9)]), 3, 12), 1);
});

test('a corrected model predicts the measured goodput at a measured configuration', () => {
  const point = measured(4, 16, 32, 1.7, 1.1);
  const base: GoodputModel = { perf, grad: { sqr: 1, var: 0 }, limits: { init_batch_size: 32, max_batch_size: 4096, min_local_bsz: 8, max_local_bsz: 128, accumulation: true } };
  const corrected: GoodputModel = { ...base, correction: stepCorrection(perf, [point]) };
  // The statistical efficiency is the same for both, so goodput scales as the throughput.
  const measuredOver = (accum_steps: number, step_s: number): number =>
    goodputOf(corrected, 4, 16, 32, accum_steps) / goodputOf(base, 4, 16, 32, accum_steps) / ((16 * 32 * (accum_steps + 1)) / step_s / throughput(perf, 4, 16, 32, accum_steps));
  close(measuredOver(0, point.optim_step_time_s), 1);
  close(measuredOver(2, 2 * point.accum_step_time_s + point.optim_step_time_s), 1);
});
