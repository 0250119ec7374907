import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PLAN_LIMITS, PLAN_PERF, planModel } from './testing/plan-fixture.js';
import { kneeOf, memoryFitLocalBatch, nodesFor, planAnswers, planType, type PlanRow } from './plan.js';
import { estimatedModel, ringSyncTerms, specFor, type GpuSpec, type TypeModel } from './plan-types.js';

const SPEC: GpuSpec = {
  name: 'X',
  match: ['X1'],
  fp32_tflops: 10,
  fp16_tflops: 80,
  memory_gib: 16,
  memory_bandwidth_gbs: 500,
  intra_node_gbs: 100,
  inter_node_gbps: 100,
  gpus_per_node: 4,
  price_per_gpu_hour: 2,
};
const model = (over: Partial<TypeModel> = {}): TypeModel => planModel(SPEC, over);
const mem = (
  base_bytes: number,
  per_sample_bytes: number,
  source: 'rss' | 'allocator' = 'allocator',
): NonNullable<TypeModel['memory']> => ({
  base_bytes,
  per_sample_bytes,
  source,
  interval: { lo: -0.05, hi: 0.05 },
});

function row(gpu_type: string, gpus: number, time_s: number, cost: number | null, spread = 0.01): PlanRow {
  return {
    gpu_type,
    gpus,
    nodes: 1,
    source: 'measured',
    samples_per_s: 1,
    efficiency: 1,
    local_bsz: 8,
    accum_steps: 0,
    batch_size: 8,
    memory_per_gpu_bytes: null,
    memory_interval_bytes: null,
    fits: true,
    network_share: 0,
    time_s,
    time_interval_s: [time_s * (1 - spread), time_s * (1 + spread)],
    interval_basis: 'test',
    interval_calibrated: false,
    gpu_hours: (time_s * gpus) / 3600,
    cost,
    cost_interval: cost === null ? null : [cost * (1 - spread), cost * (1 + spread)],
    advice: [],
  };
}

describe('planner arithmetic', () => {
  it('time, GPU-hours and cost follow from the predicted throughput (no gradient noise: efficiency 1 at the initial batch)', () => {
    const [one] = planType(model(), undefined, PLAN_LIMITS, { gpus: [1], target_samples: 32_000 });
    assert.ok(one);
    assert.equal(one.batch_size, 32);
    assert.equal(one.efficiency, 1);
    const step_s = 0.01 + 0.001 * 32; // one GPU: no network time (1e-8)
    assert.ok(Math.abs(one.samples_per_s - 32 / step_s) / (32 / step_s) < 1e-6, String(one.samples_per_s));
    assert.ok(Math.abs(one.time_s - 1000 * step_s) < 1e-3);
    assert.ok(Math.abs(one.gpu_hours - one.time_s / 3600) < 1e-12);
    assert.ok(Math.abs(one.cost! - one.gpu_hours * 2) < 1e-12);
    assert.equal(one.source, 'measured');
  });

  it('labels unmeasured shapes of a measured type estimated, and packs GPUs on nodes of the type', () => {
    const rows = planType(model(), { sqr: 1, var: 10 }, PLAN_LIMITS, { gpus: [1, 4, 8], target_samples: 1e5 });
    assert.deepEqual(
      rows.map((r) => [r.gpus, r.nodes, r.source]),
      [
        [1, 1, 'measured'],
        [4, 1, 'estimated'],
        [8, 2, 'estimated'],
      ],
    );
    assert.equal(nodesFor(9, 4), 3);
    assert.ok(rows.every((r) => r.efficiency > 0 && r.efficiency <= 1));
  });

  it('knee: the last count from which doubling still buys half the ideal speed-up', () => {
    const rows = [row('X', 1, 100, 1), row('X', 2, 50, 1), row('X', 4, 30, 1), row('X', 8, 25, 1)];
    assert.equal(kneeOf(rows, 0.5), 4); // 4 -> 8: 30/25 - 1 = 0.2 < 0.5
    assert.equal(kneeOf(rows, 0.7), 2); // 2 -> 4: 50/30 - 1 = 0.67 < 0.7
    assert.equal(kneeOf(rows, 0.1), 8);
  });

  it('fastest within the budget and cheapest within the deadline', () => {
    const rows = [
      row('A', 1, 1000, 10),
      row('A', 4, 300, 12),
      row('A', 8, 200, 30),
      row('B', 1, 500, 5),
      row('B', 2, 260, null),
    ];
    const budget = planAnswers(rows, { gpus: [], target_samples: 1, budget: 20 });
    assert.equal(budget.fastest_within_budget?.gpu_type, 'A');
    assert.equal(budget.fastest_within_budget?.gpus, 4, 'the 8-GPU plan is over budget and B x2 has no price');
    const deadline = planAnswers(rows, { gpus: [], target_samples: 1, deadline_s: 400 });
    assert.equal(deadline.cheapest_within_deadline?.gpus, 4, 'B x1 is cheaper but misses the deadline');
    assert.equal(deadline.fastest_within_budget?.gpus, 8, 'no budget: fastest of all priced or not');
    const none = planAnswers(rows, { gpus: [], target_samples: 1, deadline_s: 100, budget: 1 });
    assert.equal(none.fastest_within_budget, null);
    assert.equal(none.cheapest_within_deadline, null);
  });

  it('memory: the fit caps the local batch, and a model that fits nowhere gets no time and memory advice', () => {
    const GIB = 1024 ** 3;
    const m = model({ memory: mem(1 * GIB, 0.1 * GIB) });
    assert.equal(memoryFitLocalBatch(m), Math.floor((16 * 0.9 - 1) / 0.1));
    const [capped] = planType(m, { sqr: 1, var: 1000 }, PLAN_LIMITS, { gpus: [1], target_samples: 1e4 });
    assert.ok(capped!.local_bsz <= 134 && capped!.fits);
    const huge = model({ memory: mem(20 * GIB, 0.1 * GIB) });
    const [none] = planType(huge, undefined, PLAN_LIMITS, { gpus: [1], target_samples: 1e4 });
    assert.equal(none!.fits, false);
    assert.equal(none!.time_s, Infinity);
    assert.match(none!.advice[0]!, /activation checkpointing/);
    assert.equal(planAnswers([none!], { gpus: [1], target_samples: 1 }).fastest_within_budget, null);
  });

  it('estimated types: per-sample compute by the spec ratio, per-step overhead kept, sync from a ring all-reduce', () => {
    const fast: GpuSpec = { ...SPEC, name: 'Y', match: [], fp32_tflops: 40, memory_bandwidth_gbs: 2000 };
    const est = estimatedModel(model(), fast, 1e6);
    assert.equal(est.source, 'estimated');
    assert.equal(est.perf.alpha_c, PLAN_PERF.alpha_c);
    assert.ok(Math.abs(est.perf.beta_c - PLAN_PERF.beta_c / 4) < 1e-15);
    assert.deepEqual(
      { alpha_r: est.perf.alpha_r, alpha_n: est.perf.alpha_n },
      { alpha_r: ringSyncTerms(fast, 1e6).alpha_r, alpha_n: 8e6 / (100e9 / 8) },
    );
    assert.equal(specFor([SPEC], 'NVIDIA x1-SXM')?.name, 'X');
    assert.equal(specFor([SPEC], 'Z'), undefined);
  });
});
