import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fixedBatchChoice, optimizeBatch } from './optimize.js';
import { bestGoodput, goodputSpeedupFn, linearSpeedupFn, oneGpuSpeedup, type BestGoodputFn } from './speedup.js';
import type { GoodputModel } from './types.js';

const model: GoodputModel = {
  perf: {
    alpha_c: 0.003187,
    beta_c: 0.000781,
    alpha_n: 0.026517,
    beta_n: 0.002843,
    alpha_r: 0.011409,
    beta_r: 0.000398,
    gamma: 1.16224,
  },
  grad: { sqr: 0.573375, var: 1.45455 },
  limits: { init_batch_size: 128, max_batch_size: 4096, min_local_bsz: 32, max_local_bsz: 1024, accumulation: true },
};

test('speedup is best goodput over the (1 node, 1 replica) goodput by default', () => {
  const speedup = goodputSpeedupFn(model);
  assert.equal(speedup(1, 1), 1);
  assert.equal(speedup(0, 0), 0);
  const expected = optimizeBatch(model, 2, 8).goodput / optimizeBatch(model, 1, 1).goodput;
  assert.equal(speedup(2, 8), expected);
  assert.equal(speedup(2, 8), expected); // memoized value is the same
  assert.ok(speedup(1, 4) > 2.5 && speedup(1, 4) < 4);
});

test('a given base goodput rebases the speedup (fair share)', () => {
  const base = bestGoodput(model, 1, 16);
  const speedup = goodputSpeedupFn(model, base);
  assert.equal(speedup(1, 16), 1);
  assert.ok(speedup(1, 1) < 1);
});

test('oneGpuSpeedup searches the one-GPU goodput once (speedup(1, 1) is known to be 1) and memoizes nothing else', () => {
  const asked: string[] = [];
  const counted: BestGoodputFn = (m, n, r, batch) => {
    asked.push(`${n}/${r}`);
    return bestGoodput(m, n, r, batch);
  };
  const { one_gpu, fn } = oneGpuSpeedup(model, {}, counted);
  assert.equal(one_gpu, bestGoodput(model, 1, 1));
  assert.equal(fn(1, 1), 1);
  assert.deepEqual(asked, ['1/1']);
  assert.equal(fn(1, 4), bestGoodput(model, 1, 4) / one_gpu);
  assert.equal(fn(1, 4), goodputSpeedupFn(model)(1, 4));
  assert.deepEqual(asked, ['1/1', '1/4', '1/4']);
  assert.equal(fn(0, 0), 0);
});

test('fixed batch and batch caps change the goodput used', () => {
  assert.equal(bestGoodput(model, 1, 4, { fixed_batch_size: 1024 }), fixedBatchChoice(model, 1, 4, 1024).goodput);
  assert.equal(bestGoodput(model, 1, 4, { max_batch_size: 256 }), optimizeBatch(model, 1, 4, 256).goodput);
  assert.equal(bestGoodput(model, 0, 0), 0);
});

test('linear fallback is r / base replicas', () => {
  assert.equal(linearSpeedupFn()(1, 3), 3);
  assert.equal(linearSpeedupFn(4)(2, 6), 1.5);
  assert.equal(linearSpeedupFn(4)(0, 0), 0);
});
