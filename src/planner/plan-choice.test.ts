import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { undecidedLine } from './plan-render.js';
import { PLAN_LIMITS, planModel } from './testing/plan-fixture.js';
import { countsFor, planAnswers, planType, type PlanRow } from './plan.js';
import { CPU_SPEC_LOG_INTERVAL, TRANSFER_LOG_INTERVAL } from './plan-interval.js';
import { estimatedModel, type GpuSpec, type TypeModel } from './plan-types.js';

const GPU: GpuSpec = {
  name: 'A100',
  match: ['A100'],
  fp32_tflops: 19.5,
  fp16_tflops: 312,
  memory_gib: 80,
  memory_bandwidth_gbs: 2000,
  intra_node_gbs: 300,
  inter_node_gbps: 200,
  gpus_per_node: 8,
  price_per_gpu_hour: 2,
};
const CPU: GpuSpec = {
  ...GPU,
  name: 'cpu',
  match: ['cpu'],
  fp32_tflops: 0.1,
  fp16_tflops: 0.1,
  memory_gib: 16,
  price_per_gpu_hour: 0.05,
};
const FIT = { interval: { lo: -0.03, hi: 0.05 }, basis: 'fit', calibrated: false };
const WIDE = { interval: TRANSFER_LOG_INTERVAL, basis: 'transfer', calibrated: true };
const MB = 1024 ** 2;
/** Measured on 1 and 2 replicas; off those shapes the interval of a transfer. */
const model = (spec: GpuSpec, over: Partial<TypeModel> = {}): TypeModel =>
  planModel(spec, { measured_shapes: ['1:1', '1:2'], interval: FIT, unmeasured_interval: WIDE, ...over });
const rss = {
  base_bytes: 200 * MB,
  per_sample_bytes: 0.5 * MB,
  source: 'rss' as const,
  interval: { lo: -0.05, hi: 0.05 },
};
const REQUEST = { gpus: [1, 2, 4, 8, 16, 32], target_samples: 1e6 };

describe('a plan that chooses', () => {
  it('never extrapolates CPU slots (one node, no more than measured), never prices or recommends them', () => {
    const cpu = model(CPU, { memory: rss });
    assert.deepEqual(countsFor(cpu, REQUEST.gpus), [1, 2]);
    assert.deepEqual(countsFor(model(GPU), REQUEST.gpus), REQUEST.gpus);
    const rows = planType(cpu, undefined, PLAN_LIMITS, REQUEST);
    assert.deepEqual(
      rows.map((r) => [r.gpus, r.nodes, r.cost, r.cost_interval]),
      [
        [1, 1, null, null],
        [2, 1, null, null],
      ],
    );
    assert.ok(rows[0]!.memory_per_gpu_bytes !== null, "the CPU slot's own resident memory is shown for it");
    const answers = planAnswers(rows, REQUEST);
    assert.equal(answers.fastest_within_budget, null);
    assert.equal(answers.cheapest_within_deadline, null);
    const gpuRows = planType(model(GPU), undefined, PLAN_LIMITS, REQUEST);
    assert.equal(planAnswers([...rows, ...gpuRows], REQUEST).fastest_within_budget?.gpu_type, 'A100');
  });

  it('shows GPU memory only from a GPU measurement, else says it is unknown and how to measure it', () => {
    const [fromCpu] = planType(model(GPU, { memory: rss }), undefined, PLAN_LIMITS, REQUEST);
    assert.equal(fromCpu!.memory_per_gpu_bytes, null);
    assert.equal(fromCpu!.memory_interval_bytes, null);
    assert.match(
      fromCpu!.memory_note!,
      /GPU memory unknown: .*CPU's resident memory.*goodput profile --gpus 1 -- <command>' on a machine with A100 GPUs/,
    );
    const [fromGpu] = planType(
      model(GPU, { memory: { ...rss, source: 'allocator' } }),
      undefined,
      PLAN_LIMITS,
      REQUEST,
    );
    const m = fromGpu!.memory_per_gpu_bytes!;
    assert.equal(m, 200 * MB + 0.5 * MB * fromGpu!.local_bsz);
    assert.ok(fromGpu!.memory_interval_bytes![0] < m && m < fromGpu!.memory_interval_bytes![1]);
    assert.equal(fromGpu!.memory_note, undefined);
  });

  it("gives every row an 80% interval: the fit's at a measured shape, the wider one elsewhere; cost moves with time", () => {
    const rows = planType(model(GPU), undefined, PLAN_LIMITS, REQUEST);
    const [one, , four] = rows;
    assert.ok(Math.abs(one!.time_interval_s[0] / one!.time_s - Math.exp(-0.03)) < 1e-12);
    assert.ok(Math.abs(one!.time_interval_s[1] / one!.time_s - Math.exp(0.05)) < 1e-12);
    assert.equal(one!.interval_basis, 'fit');
    assert.ok(Math.abs(four!.time_interval_s[1] / four!.time_s - Math.exp(TRANSFER_LOG_INTERVAL.hi)) < 1e-12);
    assert.equal(four!.interval_calibrated, true);
    assert.ok(Math.abs(four!.cost_interval![1] / four!.cost! - Math.exp(TRANSFER_LOG_INTERVAL.hi)) < 1e-12);
    assert.deepEqual(
      estimatedModel(model(CPU), GPU, 1e6).interval.interval,
      CPU_SPEC_LOG_INTERVAL,
      'a CPU profile carried to a GPU: an order of magnitude',
    );
  });

  it('says when the intervals are too wide to choose, and what to measure', () => {
    const row = (gpu_type: string, time_s: number, spread: number, source: PlanRow['source']): PlanRow => ({
      ...planType(model(GPU), undefined, PLAN_LIMITS, { gpus: [4], target_samples: 1e6 })[0]!,
      gpu_type,
      source,
      time_s,
      time_interval_s: [time_s * (1 - spread), time_s * (1 + spread)],
      cost: time_s,
      cost_interval: [time_s * (1 - spread), time_s * (1 + spread)],
    });
    const close = planAnswers([row('A100', 100, 0.02, 'measured'), row('V100', 110, 0.2, 'transferred')], REQUEST);
    assert.equal(close.fastest_within_budget?.gpu_type, 'A100');
    assert.deepEqual(
      close.undecided.map((u) => [u.answer, u.rival?.gpu_type, u.measure]),
      [
        ['fastest', 'V100', { gpu_type: 'V100', gpus: 2, time_s: 300 }],
        ['cheapest', 'V100', { gpu_type: 'V100', gpus: 2, time_s: 300 }],
      ],
    );
    assert.match(
      undecidedLine(close.undecided[0]!, 'k'),
      /too wide to choose; measure 2 GPUs of type V100 for 5 minutes \('goodput profile --profile k --gpus 2 --time-s 300 -- <command>' on a machine with V100 GPUs\) to narrow this/,
    );
    const overBudget = planAnswers([row('A100', 100, 0.02, 'measured'), row('V100', 110, 0.2, 'transferred')], {
      ...REQUEST,
      budget: 105,
    });
    assert.equal(
      overBudget.undecided[0]?.rival?.gpu_type,
      'V100',
      'a rival over the budget by its point cost may still be within it',
    );
    const apart = planAnswers([row('A100', 100, 0.02, 'measured'), row('V100', 200, 0.2, 'transferred')], REQUEST);
    assert.deepEqual(apart.undecided, []);
    const alone = planAnswers([row('V100', 110, 0.5, 'estimated')], REQUEST);
    assert.deepEqual(
      alone.undecided.map((u) => [u.answer, u.rival, u.measure.gpu_type]),
      [
        ['fastest', null, 'V100'],
        ['cheapest', null, 'V100'],
      ],
    );
    assert.match(
      undecidedLine(alone.undecided[0]!, 'k'),
      /fastest: 4 x V100: its 80% interval \(55s-3m\) is too wide to book on; measure 2 GPUs of type V100/,
    );
    assert.deepEqual(
      planAnswers([row('V100', 110, 0.5, 'measured')], REQUEST).undecided,
      [],
      'a measured row: measuring again would not narrow it',
    );
  });
});
