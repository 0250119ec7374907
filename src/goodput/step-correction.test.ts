import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goodputOf } from './optimize.js';
import { computeFactor, optimFactor, stepCorrection } from './step-correction.js';
import { throughput } from './throughput.js';
import type { GoodputModel, PerfParams, ProfilePoint } from './types.js';
import { perfPoint } from './testing/perf-fixture.js';

const perf: PerfParams = {
  alpha_c: 0.01,
  beta_c: 0.001,
  alpha_n: 0.05,
  beta_n: 0.002,
  alpha_r: 0.02,
  beta_r: 0.001,
  gamma: 1,
};
const close = (a: number, b: number, tol = 1e-9): void =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} != ${b}`);
const logMix = (a: number, b: number, t: number): number => Math.exp((1 - t) * Math.log(a) + t * Math.log(b));

/** A measurement `optimFactorValue` times slower than `perf` predicts at that configuration (compute `computeFactorValue`). */
function measured(
  num_nodes: number,
  num_replicas: number,
  local_bsz: number,
  optimFactorValue: number,
  computeFactorValue = 1,
): ProfilePoint {
  return perfPoint(
    { num_nodes, num_replicas, local_bsz, scale: optimFactorValue, accum_scale: computeFactorValue },
    perf,
  );
}

test('a measured configuration is corrected by its own measurement; repeated ones average geometrically', () => {
  const c = stepCorrection(perf, [
    measured(2, 8, 32, 2),
    measured(2, 8, 64, 0.5),
    measured(1, 4, 32, 1.5, 1.2),
    measured(1, 4, 32, 1.5 * 4, 1.2 * 4),
  ]);
  close(optimFactor(c, 2, 8, 32), 2);
  close(optimFactor(c, 2, 8, 64), 0.5);
  close(optimFactor(c, 1, 4, 32), 3);
  close(computeFactor(c, 32), (1 * 1.2 * 4.8) ** (1 / 3), 1e-9);
  close(computeFactor(c, 64), 1);
});

test('within a shape, local batches not measured interpolate in log(local batch) and hold the nearest beyond', () => {
  const c = stepCorrection(perf, [measured(2, 8, 16, 2, 0.8), measured(2, 8, 64, 0.5, 1.6)]);
  close(optimFactor(c, 2, 8, 32), logMix(2, 0.5, 0.5));
  close(optimFactor(c, 2, 8, 8), 2);
  close(optimFactor(c, 2, 8, 256), 0.5);
  close(computeFactor(c, 32), logMix(0.8, 1.6, 0.5));
  close(computeFactor(c, 4), 0.8);
  close(computeFactor(stepCorrection(perf, []), 32), 1);
});

test('unmeasured shapes interpolate in log(replicas) within their kind, hold the nearest beyond, and default to 1', () => {
  const c = stepCorrection(perf, [
    measured(2, 8, 32, 1.2),
    measured(8, 32, 32, 1.8),
    measured(8, 32, 128, 3.6),
    measured(1, 2, 32, 0.9),
  ]);
  close(optimFactor(c, 4, 16, 32), logMix(1.2, 1.8, 0.5));
  // Each neighbouring shape first gives its factor at the batch asked for.
  close(optimFactor(c, 4, 16, 64), logMix(1.2, logMix(1.8, 3.6, 0.5), 0.5));
  close(optimFactor(c, 16, 64, 32), 1.8);
  close(optimFactor(c, 2, 6, 32), 1.2);
  // One-node shapes never borrow the multi-node factors.
  close(optimFactor(c, 1, 4, 32), 0.9);
  close(optimFactor(stepCorrection(perf, [measured(1, 2, 32, 0.9)]), 3, 12, 32), 1);
});

test('a corrected model predicts the measured goodput at every measured configuration', () => {
  const points = [measured(4, 16, 32, 1.7, 1.1), measured(4, 16, 64, 0.8, 1.3)];
  const base: GoodputModel = {
    perf,
    grad: { sqr: 1, var: 0 },
    limits: { init_batch_size: 32, max_batch_size: 4096, min_local_bsz: 8, max_local_bsz: 128, accumulation: true },
  };
  const corrected: GoodputModel = { ...base, correction: stepCorrection(perf, points) };
  for (const point of points) {
    const b = point.local_bsz;
    // The statistical efficiency is the same for both, so goodput scales as the throughput.
    const measuredOver = (accum_steps: number, step_s: number): number =>
      goodputOf(corrected, 4, 16, b, accum_steps) /
      goodputOf(base, 4, 16, b, accum_steps) /
      ((16 * b * (accum_steps + 1)) / step_s / throughput(perf, 4, 16, b, accum_steps));
    close(measuredOver(0, point.optim_step_time_s), 1);
    close(measuredOver(2, 2 * point.accum_step_time_s + point.optim_step_time_s), 1);
  }
});
