import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SPLIT_EPS, splitBatch } from './batch-split.js';
import { fixedBatchChoice, geomspace, goodputOf, optimizeBatch } from './optimize.js';
import { stepCorrection } from './step-correction.js';
import type { BatchLimits, GoodputModel, PerfParams, ProfilePoint } from './types.js';

const cifar10: BatchLimits = {
  init_batch_size: 128,
  max_batch_size: 4096,
  min_local_bsz: 32,
  max_local_bsz: 1024,
  accumulation: true,
};
/** The 4-point cifar10 fit of pollux-spec §3.2 (scipy 1.17), as printed there. */
const perf: PerfParams = {
  alpha_c: 0.003187,
  beta_c: 0.000781,
  alpha_n: 0.026517,
  beta_n: 0.002843,
  alpha_r: 0.011409,
  beta_r: 0.000398,
  gamma: 1.16224,
};
/** cifar10 at B = 128, epoch 5 (pollux-spec §3.4). */
const model: GoodputModel = { perf, grad: { sqr: 0.573375, var: 1.45455 }, limits: cifar10 };

test('geomspace matches numpy (endpoints exact)', () => {
  const g = geomspace(128, 4096, 50);
  assert.equal(g.length, 50);
  assert.equal(g[0], 128);
  assert.equal(g[49], 4096);
  const numpy = [128.0, 137.38120335414712, 147.4499612111994, 158.25666488841318, 169.8553989155016];
  numpy.forEach((v, i) => assert.ok(Math.abs((g[i] as number) / v - 1) < 1e-14));
  assert.ok(Math.abs((g[48] as number) / 3816.300827184253 - 1) < 1e-14);
  const flat = geomspace(64, 64, 50);
  assert.ok(flat.every((v) => Math.abs(v / 64 - 1) < 1e-14));
});

test('optimizeBatch reproduces the pollux-spec §3.4 references', () => {
  const refs: Array<[number, number, number, number]> = [
    // n, r, goodput, local bsz (accum steps are 0 for all four)
    [1, 1, 1241.33, 128],
    [1, 4, 3468.24, 37],
    [2, 8, 3207.48, 48],
    [4, 16, 3265.58, 44],
  ];
  for (const [n, r, goodput, bsz] of refs) {
    const choice = optimizeBatch(model, n, r);
    assert.equal(choice.local_bsz, bsz, `(${n}, ${r}) local bsz`);
    assert.equal(choice.accum_steps, 0);
    // The spec prints the parameters rounded to 4 digits; 0.1% covers that rounding.
    assert.ok(Math.abs(choice.goodput / goodput - 1) < 1e-3, `(${n}, ${r}) goodput ${choice.goodput} vs ${goodput}`);
  }
});

test('a single replica accumulates at least once above B0', () => {
  // Very noisy gradients make large batches efficient, so the optimum is far above B0.
  const noisy: GoodputModel = { perf, grad: { sqr: 0.01, var: 10 }, limits: cifar10 };
  const choice = optimizeBatch(noisy, 1, 1);
  assert.ok(choice.local_bsz * (choice.accum_steps + 1) > 128);
  assert.ok(choice.accum_steps >= 1);
  const noAccum = optimizeBatch({ ...noisy, limits: { ...cifar10, accumulation: false } }, 1, 1);
  assert.equal(noAccum.accum_steps, 0);
});

test('configurations outside [min_local, max_local] score zero; first candidate wins ties', () => {
  const tight: GoodputModel = { ...model, limits: { ...cifar10, max_local_bsz: 64, accumulation: false } };
  const choice = optimizeBatch(tight, 1, 1);
  assert.equal(choice.goodput, 0);
  assert.equal(choice.local_bsz, 128);
});

test('a max batch size override caps the chosen total batch', () => {
  const noisy: GoodputModel = { perf, grad: { sqr: 0.01, var: 10 }, limits: cifar10 };
  const free = optimizeBatch(noisy, 1, 4);
  const capped = optimizeBatch(noisy, 1, 4, 512);
  assert.ok(free.local_bsz * 4 * (free.accum_steps + 1) > 512);
  assert.ok(capped.local_bsz * 4 * (capped.accum_steps + 1) <= 512 + 4);
  assert.ok(capped.goodput <= free.goodput);
  // Below B0 the override is raised to B0.
  assert.deepEqual(optimizeBatch(noisy, 1, 1, 10), optimizeBatch(noisy, 1, 1, 128));
});

test('fixed-batch configurations match the pollux-spec §1.6 test vectors', () => {
  const apps: Record<string, BatchLimits> = {
    cifar10,
    ncf: { init_batch_size: 256, max_batch_size: 32768, min_local_bsz: 32, max_local_bsz: 32768, accumulation: true },
    yolov3: { init_batch_size: 8, max_batch_size: 512, min_local_bsz: 4, max_local_bsz: 8, accumulation: true },
    imagenet: {
      init_batch_size: 200,
      max_batch_size: 12800,
      min_local_bsz: 20,
      max_local_bsz: 200,
      accumulation: true,
    },
    bert: { init_batch_size: 12, max_batch_size: 384, min_local_bsz: 4, max_local_bsz: 12, accumulation: true },
    deepspeech2: { init_batch_size: 20, max_batch_size: 640, min_local_bsz: 10, max_local_bsz: 80, accumulation: true },
  };
  const vectors: Array<[string, number, number, number, number, number]> = [
    // app, B, nodes, replicas, b, a
    ['cifar10', 2048, 2, 6, 342, 0],
    ['cifar10', 4096, 3, 12, 341, 0],
    ['ncf', 32768, 1, 1, 16384, 1],
    ['yolov3', 64, 1, 4, 8, 1],
    ['imagenet', 6400, 12, 48, 134, 0],
    ['bert', 384, 4, 16, 12, 1],
    ['deepspeech2', 640, 3, 12, 53, 0],
    ['deepspeech2', 320, 1, 1, 80, 3],
  ];
  for (const [app, B, n, r, b, a] of vectors) {
    const choice = fixedBatchChoice({ perf, grad: model.grad, limits: apps[app] as BatchLimits }, n, r, B);
    assert.deepEqual([choice.local_bsz, choice.accum_steps], [b, a], `${app} ${B} on ${r} replicas`);
    assert.ok(choice.goodput > 0);
  }
});

test('optimizeBatch scores every candidate exactly as goodputOf does (step times reused across equal micro-batches)', () => {
  // bert-like limits: most candidates split to the same few micro-batches with more accumulation.
  const bert: BatchLimits = {
    init_batch_size: 12,
    max_batch_size: 384,
    min_local_bsz: 4,
    max_local_bsz: 12,
    accumulation: true,
  };
  const point = (n: number, r: number, b: number, scale: number): ProfilePoint => ({
    num_nodes: n,
    num_replicas: r,
    local_bsz: b,
    accum_step_time_s: (perf.alpha_c + perf.beta_c * b) * scale,
    optim_step_time_s: (perf.alpha_c + perf.beta_c * b) * scale * 1.7,
  });
  const correction = stepCorrection(perf, [point(1, 1, 4, 1.1), point(1, 2, 8, 0.9), point(2, 8, 12, 1.3)]);
  for (const limits of [bert, cifar10]) {
    for (const m of [
      { ...model, limits },
      { ...model, limits, correction },
    ] as GoodputModel[]) {
      for (const [n, r] of [
        [1, 1],
        [1, 2],
        [2, 8],
        [4, 16],
      ] as const) {
        for (const within_max of [false, true]) {
          // The artifact's scan, term for term: every candidate by goodputOf, the first best kept.
          const maxB = limits.max_batch_size;
          let best = { goodput: 0, local_bsz: 0, accum_steps: 0 };
          let bestGoodput = -Infinity;
          for (const B of geomspace(Math.max(limits.init_batch_size, limits.min_local_bsz * r), maxB, 50)) {
            const split = splitBatch(limits, B, r);
            const bsz = within_max
              ? Math.min(split.local_bsz, Math.floor(maxB / (r * (split.accum_steps + 1)) + SPLIT_EPS))
              : split.local_bsz;
            const g =
              bsz >= limits.min_local_bsz && bsz <= limits.max_local_bsz
                ? goodputOf(m, n, r, bsz, split.accum_steps)
                : 0;
            if (g > bestGoodput) {
              bestGoodput = g;
              best = { goodput: g, local_bsz: bsz, accum_steps: split.accum_steps };
            }
          }
          assert.deepEqual(optimizeBatch(m, n, r, undefined, within_max), best, `${limits.max_local_bsz} ${n}/${r}`);
        }
      }
    }
  }
});
