import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Measurement } from '../../core/wire.js';
import type { BatchLimits } from '../../goodput/types.js';
import { jobRecordFixture, storedProfileFixture } from '../../store/job-fixture.js';
import type { JobRecord } from '../../store/types.js';
import { fitPerfParams } from '../../goodput/fit.js';
import { fitJob } from '../../model/job-fit.js';
import { configFor } from './batch-config.js';
import { ACCUMULATING_LIMITS, perfPoint } from '../../goodput/testing/perf-fixture.js';

function job(fixed_batch_size: number | undefined, limits: BatchLimits | null): JobRecord {
  const base = jobRecordFixture({
    allocation: [0, 0],
    devices: [0, 1],
    max_profiled_replicas: 2,
    limits,
    perf: null,
    grad: null,
    step: 0,
    samples: 0,
    last_report_at_ms: null,
  });
  return { ...base, spec: { ...base.spec, ...(fixed_batch_size ? { fixed_batch_size } : {}) } };
}

const latest: Measurement = {
  time_s: 1,
  step: 1,
  num_nodes: 1,
  num_replicas: 2,
  local_bsz: 40,
  accum_steps: 0,
  step_time_s: 0.1,
  sync_time_s: 0.01,
};
const limits = ACCUMULATING_LIMITS;

describe('configFor before the job has a model', () => {
  it('splits a fixed batch by the one rule: accumulation within max_local_bsz', () => {
    assert.deepEqual(configFor(job(256, limits), latest), {
      local_bsz: 16,
      accum_steps: 7,
      batch_size: 256,
      lr_scale: 1,
    });
  });
  it('caps the micro-batch at max_local_bsz when accumulation is off', () => {
    assert.deepEqual(configFor(job(256, { ...limits, accumulation: false }), latest), {
      local_bsz: 16,
      accum_steps: 0,
      batch_size: 32,
      lr_scale: 1,
    });
  });
  it('keeps the job own configuration without a fixed batch', () => {
    assert.deepEqual(configFor(job(undefined, limits), latest), {
      local_bsz: 40,
      accum_steps: 0,
      batch_size: 80,
      lr_scale: 1,
    });
  });
});

describe('configFor with the profile of its key', () => {
  const perf = { alpha_c: 0.01, beta_c: 0.001, alpha_n: 0.02, beta_n: 0.001, alpha_r: 0.01, beta_r: 0.001, gamma: 1.5 };
  const fitted: JobRecord = { ...job(undefined, { ...limits, max_local_bsz: 64 }), perf, grad: { sqr: 1, var: 20 } };
  const onTwoNodes: Measurement = { ...latest, num_nodes: 2, num_replicas: 8, local_bsz: 8 };
  // The key measured 2 nodes x 8 replicas 10x slower to synchronize than the fit predicts.
  const slowSync = perfPoint({ num_nodes: 2, num_replicas: 8, local_bsz: 8, scale: 10, accum_scale: 1 }, perf);
  const profile = storedProfileFixture('train', 'cpu', [slowSync], perf);

  it('chooses the batch by the corrected model, as the scheduling round predicts', () => {
    const plain = configFor(fitted, onTwoNodes);
    // The job's refit (model/job-fit.ts) on the profile's points saves their correction with the fit.
    const refit = fitJob({ own: [], profile, profile_perf: perf, corrected: true, fit: fitPerfParams })!;
    const corrected = configFor({ ...fitted, correction: refit.correction }, onTwoNodes, profile);
    // A slow synchronization is amortized over more samples per optimizer step.
    assert.ok(corrected.batch_size > plain.batch_size, `${corrected.batch_size} vs ${plain.batch_size}`);
  });
});
