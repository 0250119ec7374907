import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accumStepTime_s, networkTime_s, optimStepTime_s, stepTime_s, throughput } from './throughput.js';
import type { PerfParams } from './types.js';

const perf: PerfParams = {
  alpha_c: 0.01,
  beta_c: 0.001,
  alpha_n: 0.05,
  beta_n: 0.002,
  alpha_r: 0.02,
  beta_r: 0.001,
  gamma: 1,
};
const close = (a: number, b: number, tol = 1e-12): void =>
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} != ${b}`);

test('micro-step time is linear in the local batch', () => {
  close(accumStepTime_s(perf, 100), 0.11);
  close(accumStepTime_s(perf, 0), 0.01);
});

test('network time picks inter-node, intra-node or (almost) none', () => {
  close(networkTime_s(perf, 2, 8), 0.05 + 0.002 * 6);
  close(networkTime_s(perf, 1, 4), 0.02 + 0.001 * 2);
  close(networkTime_s(perf, 1, 2), 0.02 + 0.001 * 1e-8);
  close(networkTime_s(perf, 1, 1), 1e-8 + 1e-16);
});

test('optimizer step overlaps compute and network with the gamma-norm', () => {
  close(optimStepTime_s(perf, 1, 4, 100), 0.11 + 0.022);
  close(optimStepTime_s({ ...perf, gamma: 2 }, 1, 4, 100), Math.hypot(0.11, 0.022));
  // Large gamma approaches max(t_acc, t_net), never below it.
  const t = optimStepTime_s({ ...perf, gamma: 10 }, 2, 8, 10);
  assert.ok(t >= 0.062 && t < 0.0625);
  // A single replica costs only its compute time.
  close(optimStepTime_s({ ...perf, gamma: 1.5 }, 1, 1, 100), 0.11, 1e-9);
});

test('step time and throughput with accumulation', () => {
  close(stepTime_s(perf, 1, 4, 100, 2), 2 * 0.11 + 0.132);
  close(throughput(perf, 1, 4, 100, 2), (4 * 100 * 3) / 0.352);
  close(throughput(perf, 1, 1, 100, 0), 100 / (0.11 + 1e-8 + 1e-16), 1e-9);
});
