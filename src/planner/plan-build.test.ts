import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { optimStepTime_s } from '../goodput/throughput.js';
import type { PerfParams, ProfilePoint } from '../goodput/types.js';
import { MEASURED_PERF, PLAN_LIMITS, planPoints } from './testing/plan-fixture.js';
import { planModels } from './plan-build.js';
import { planType } from './plan.js';
import type { DeviceProfile, GpuSpec } from './plan-types.js';

const LIMITS = PLAN_LIMITS;
const spec = (name: string, fp32: number): GpuSpec => ({
  name,
  match: [name],
  fp32_tflops: fp32,
  fp16_tflops: fp32 * 8,
  memory_gib: 16,
  memory_bandwidth_gbs: 100 * fp32,
  intra_node_gbs: 50,
  inter_node_gbps: 100,
  gpus_per_node: 4,
  price_per_gpu_hour: 1,
});
const SPECS = [spec('A', 10), spec('B', 20), spec('C', 40)];

/** Points of a job following `perf` at 1, 2 and 4 replicas (or only 1). */
const points = planPoints;
const profile = (gpu_type: string, pts: ProfilePoint[], model_parameters?: number): DeviceProfile => ({
  gpu_type,
  points: pts,
  grad: [{ progress: 0, sqr: 1, var: 20 }],
  limits: LIMITS,
  notes: [],
  ...(model_parameters ? { model_parameters } : {}),
});
const ON_A = MEASURED_PERF;
const ON_B: PerfParams = { ...ON_A, alpha_c: 0.005, beta_c: 0.001, alpha_r: 0.04, beta_r: 0.004 };

describe('planner type models', () => {
  it('measured where profiled, transferred where the key ran one GPU and another key both types, estimated elsewhere', () => {
    const other = [
      profile('A', points({ ...ON_A, beta_c: 0.003 }, [1, 2, 4])),
      profile('B', points({ ...ON_B, beta_c: 0.0015 }, [1, 2, 4])),
    ];
    const built = planModels({
      profiles: [profile('A', points(ON_A, [1, 2, 4]), 1e6), profile('B', points(ON_B, [1]))],
      others: [other],
      specs: SPECS,
    });
    assert.deepEqual(
      built.models.map((m) => [m.spec.name, m.source]),
      [
        ['A', 'measured'],
        ['B', 'transferred'],
        ['C', 'estimated'],
      ],
    );
    // The transfer carries B's slower intra-node sync (seen in the other key) to this key's 4-GPU step.
    const b = built.models[1]!;
    const truth = (4 * 64) / optimStepTime_s(ON_B, 1, 4, 64);
    const [row] = planType(b, undefined, { ...LIMITS, init_batch_size: 256 }, { gpus: [4], target_samples: 1e4 });
    assert.equal(row!.local_bsz, 64);
    assert.ok(Math.abs(row!.samples_per_s / truth - 1) < 0.1, `${row!.samples_per_s} vs ${truth}`);
    // Without the other key, B's 4-GPU sync comes from the specs (ring all-reduce): 51% too fast here.
    const alone = planModels({
      profiles: [profile('A', points(ON_A, [1, 2, 4]), 1e6), profile('B', points(ON_B, [1]))],
      others: [],
      specs: SPECS,
      types: ['B'],
    });
    const [guess] = planType(
      alone.models[0]!,
      undefined,
      { ...LIMITS, init_batch_size: 256 },
      { gpus: [4], target_samples: 1e4 },
    );
    assert.ok(guess!.samples_per_s / truth > 1.3, `${guess!.samples_per_s} vs ${truth}`);
  });

  it('without other keys the one-GPU type is its own measurement, estimated beyond one GPU', () => {
    const built = planModels({
      profiles: [profile('A', points(ON_A, [1, 2, 4]), 1e6), profile('B', points(ON_B, [1]))],
      others: [],
      specs: SPECS,
      types: ['B'],
    });
    assert.deepEqual(
      built.models.map((m) => [m.spec.name, m.source]),
      [['B', 'measured']],
    );
    const rows = planType(built.models[0]!, built.grad, built.limits, { gpus: [1, 2], target_samples: 1e4 });
    assert.deepEqual(
      rows.map((r) => r.source),
      ['measured', 'estimated'],
    );
  });

  it('refuses a measured type missing from the GPU table, naming it', () => {
    assert.throws(
      () => planModels({ profiles: [profile('Z100', points(ON_A, [1]))], others: [], specs: SPECS }),
      /'Z100' is not in the GPU table/,
    );
    assert.throws(
      () => planModels({ profiles: [profile('A', points(ON_A, [1]))], others: [], specs: SPECS, types: ['Z9'] }),
      /none of the types asked for is in the GPU table \(Z9\); it has A, B, C/,
    );
  });
});
