import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobRecord } from '../store/types.js';
import { buildSnapshot, toPolicyJob } from './snapshot.js';

/** A stored job that has reported once (limits, model) and runs on 2 devices since t = 10 s. */
function reported(extra: Partial<JobRecord> = {}): JobRecord {
  return {
    id: 'j', name: 'j', user: 'u', state: 'running',
    spec: { name: 'j', command: ['x'], workdir: '/', env: {}, min_replicas: 0, max_replicas: 4, max_restarts: 1, preemptible: true, priority: 0 },
    submitted_at_ms: 1000, started_at_ms: 10_000, finished_at_ms: null, launches: 1, failures: 0,
    allocation: [0, 0], devices: [0, 1], not_before_ms: 0, launched_at_ms: 10_000, stop_requested_at_ms: null,
    attained_service_gpu_s: 5, max_profiled_replicas: 2,
    limits: { init_batch_size: 64, max_batch_size: 512, min_local_bsz: 8, max_local_bsz: 256, accumulation: true },
    perf: { alpha_c: 0.1, beta_c: 0.01, alpha_n: 1e-8, beta_n: 1e-8, alpha_r: 0.01, beta_r: 0.001, gamma: 1.5 },
    grad: { sqr: 0.5, var: 1.5 },
    step: 100, samples: 6400, remaining_samples: null, last_report_at_ms: 20_000, last_step_time_s: null, stop_kind: null, last_failure: null, health: null, reason: '',
    ...extra,
  };
}

describe('toPolicyJob', () => {
  it('passes the reported remaining samples to the policy', () => {
    const pj = toPolicyJob(reported({ remaining_samples: 12_800 }), 20_000);
    assert.equal(pj.remaining_samples, 12_800);
    assert.equal(pj.attained_service_gpu_s, 5 + 10 * 2, 'attained service is still computed');
    assert.ok(pj.model, 'the model is still passed');
  });

  it('passes zero: a job at the end of its last epoch has no work left', () => {
    assert.equal(toPolicyJob(reported({ remaining_samples: 0 }), 20_000).remaining_samples, 0);
  });

  it('leaves remaining_samples absent when unknown, so the policy falls back to attained service', () => {
    const pj = toPolicyJob(reported(), 20_000);
    assert.equal(pj.remaining_samples, undefined);
    assert.ok(!('remaining_samples' in pj), 'absent, not undefined-valued');
  });

  it('carries it through buildSnapshot', () => {
    const snapshot = buildSnapshot([{ index: 0, name: 'local', gpus: 4, preemptible: false }], [reported({ remaining_samples: 640 }), reported({ id: 'k' })], 20_000);
    assert.deepEqual(snapshot.jobs.map((j) => j.remaining_samples), [640, undefined]);
  });
});
