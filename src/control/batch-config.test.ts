import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Measurement } from '../core/wire.js';
import type { BatchLimits } from '../goodput/types.js';
import { jobRecordFixture } from '../store/job-fixture.js';
import type { JobRecord } from '../store/types.js';
import { configFor } from './batch-config.js';

function job(fixed_batch_size: number | undefined, limits: BatchLimits | null): JobRecord {
  const base = jobRecordFixture({ allocation: [0, 0], devices: [0, 1], max_profiled_replicas: 2, limits, perf: null, grad: null, step: 0, samples: 0, last_report_at_ms: null });
  return { ...base, spec: { ...base.spec, ...(fixed_batch_size ? { fixed_batch_size } : {}) } };
}

const latest: Measurement = { time_s: 1, step: 1, num_nodes: 1, num_replicas: 2, local_bsz: 40, accum_steps: 0, step_time_s: 0.1, sync_time_s: 0.01 };
const limits: BatchLimits = { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 1, max_local_bsz: 16, accumulation: true };

describe('configFor before the job has a model', () => {
  it('splits a fixed batch by the one rule: accumulation within max_local_bsz', () => {
    assert.deepEqual(configFor(job(256, limits), latest), { local_bsz: 16, accum_steps: 7, batch_size: 256, lr_scale: 1 });
  });
  it('caps the micro-batch at max_local_bsz when accumulation is off', () => {
    assert.deepEqual(configFor(job(256, { ...limits, accumulation: false }), latest), { local_bsz: 16, accum_steps: 0, batch_size: 32, lr_scale: 1 });
  });
  it('keeps the job own configuration without a fixed batch', () => {
    assert.deepEqual(configFor(job(undefined, limits), latest), { local_bsz: 40, accum_steps: 0, batch_size: 80, lr_scale: 1 });
  });
});
