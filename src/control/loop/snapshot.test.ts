import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobRecordFixture, storedProfileFixture } from '../../store/job-fixture.js';
import { goodputOf } from '../../goodput/optimize.js';
import { stepCorrection } from '../../goodput/step-correction.js';
import { perfPoint } from '../../goodput/testing/perf-fixture.js';
import type { JobRecord } from '../../store/types.js';
import { buildSnapshot, stopProtection, toPolicyJob } from './snapshot.js';

/** A stored job that has reported once (limits, model) and runs on 2 devices since t = 10 s. */
function reported(extra: Partial<JobRecord> = {}): JobRecord {
  return jobRecordFixture({
    submitted_at_ms: 1000,
    started_at_ms: 10_000,
    allocation: [0, 0],
    devices: [0, 1],
    launched_at_ms: 10_000,
    attained_service_gpu_s: 5,
    max_profiled_replicas: 2,
    step: 100,
    samples: 6400,
    last_report_at_ms: 20_000,
    limits: { init_batch_size: 64, max_batch_size: 512, min_local_bsz: 8, max_local_bsz: 256, accumulation: true },
    perf: { alpha_c: 0.1, beta_c: 0.01, alpha_n: 1e-8, beta_n: 1e-8, alpha_r: 0.01, beta_r: 0.001, gamma: 1.5 },
    grad: { sqr: 0.5, var: 1.5 },
    checkpoint_at_ms: null,
    checkpoint_on_stop: true,
    ...extra,
  });
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

  it('carries it through buildSnapshot', async () => {
    const snapshot = await buildSnapshot(
      [{ index: 0, name: 'local', gpus: 4, preemptible: false }],
      [reported({ remaining_samples: 640 }), reported({ id: 'k' })],
      20_000,
    );
    assert.deepEqual(
      snapshot.jobs.map((j) => j.remaining_samples),
      [640, undefined],
    );
  });
});

describe('what a preemption costs (toPolicyJob)', () => {
  const plain = (extra: Partial<JobRecord> = {}): JobRecord => {
    const base = reported({
      checkpoint_on_stop: false,
      last_report_at_ms: null,
      perf: null,
      grad: null,
      limits: null,
      max_profiled_replicas: 0,
      ...extra,
    });
    const { preemptible: _, ...spec } = base.spec;
    return { ...base, spec: { ...spec, ...(extra.spec ?? {}) } };
  };

  it('a plain running job that never checkpointed is kept, with a reason, and all its progress is at risk', () => {
    const job = plain();
    const pj = toPolicyJob(job, 25_000);
    assert.equal(pj.preemptible, false, 'every policy sees it as non-preemptible');
    assert.equal(pj.progress_at_risk_s, 15, 'everything since its launch at 10 s');
    assert.equal(pj.allocated_since_s, 10);
    assert.match(stopProtection(job) ?? '', /no checkpoint yet.*preemptible: true/);
  });

  it('preemptible: true lets the policy stop it, priced by all the work it would lose', () => {
    const job = plain({ spec: { ...reported().spec, preemptible: true } });
    const pj = toPolicyJob(job, 25_000);
    assert.equal(pj.preemptible, true);
    assert.equal(pj.progress_at_risk_s, 15);
    assert.equal(stopProtection(job), undefined);
  });

  it('preemptible: false pins it whatever its checkpoints', () => {
    assert.equal(
      toPolicyJob(reported({ spec: { ...reported().spec, preemptible: false } }), 25_000).preemptible,
      false,
    );
  });

  it('a reported checkpoint lifts the protection; only the work since it is at risk', () => {
    const pj = toPolicyJob(plain({ checkpoint_at_ms: 21_000 }), 25_000);
    assert.equal(pj.preemptible, true);
    assert.equal(pj.progress_at_risk_s, 4);
  });

  it('a job that checkpoints when stopped (the SDK) loses nothing: no cost beyond the restart delay', () => {
    const pj = toPolicyJob(plain({ checkpoint_on_stop: true }), 25_000);
    assert.equal(pj.preemptible, true);
    assert.ok(!('progress_at_risk_s' in pj));
  });

  it('a queued job has nothing at risk and no protection', () => {
    const job = plain({ state: 'queued', allocation: [], devices: [], launched_at_ms: null });
    const pj = toPolicyJob(job, 25_000);
    assert.equal(pj.preemptible, true);
    assert.ok(!('progress_at_risk_s' in pj) && !('allocated_since_s' in pj));
  });
});

describe('a model started from its key profile (toPolicyJob)', () => {
  const perf = reported().perf!;
  // Measured twice as slow as `perf` predicts on 2 nodes x 8 replicas: the fit errs there.
  const at = { num_nodes: 2, num_replicas: 8, local_bsz: 32, accum_scale: 1 };
  const slow = perfPoint({ ...at, scale: 2 }, perf);
  const profile = storedProfileFixture('resnet', 'cpu', [slow], perf, {
    job_ids: ['other'],
    limits: reported().limits,
  });

  it("is corrected by the measurements its fit was made on: the key's before its own fit; without a profile, by the job's own", () => {
    const job = reported({ spec: { ...reported().spec, profile: 'resnet' } });
    const alone = toPolicyJob(job, 20_000).model!;
    assert.equal(alone.correction, undefined, 'nothing measured, nothing corrected');
    // Before its own refit the job's model is the profile's fit, corrected by the profile's points.
    const withProfile = toPolicyJob({ ...job, perf: null }, 20_000, profile).model!;
    assert.deepEqual(withProfile.correction, stepCorrection(perf, profile.points));
    // After it, the correction saved with its fit (its points and the profile's, report-ingest.ts).
    const own = stepCorrection(perf, [perfPoint({ ...at, scale: 3 }, perf)]);
    const corrected = { ...job, correction: own };
    assert.deepEqual(toPolicyJob(corrected, 20_000).model!.correction, own, 'no profile: its own measurements');
    assert.deepEqual(
      toPolicyJob(corrected, 20_000, profile).model!.correction,
      own,
      'with a profile: those its fit was made on',
    );
    const ratio = goodputOf(alone, 2, 8, 32, 0) / goodputOf(withProfile, 2, 8, 32, 0);
    assert.ok(Math.abs(ratio - 2) < 1e-9, `measured 2x slower, predicted ${ratio}x`);
    assert.equal(
      goodputOf(withProfile, 1, 2, 32, 0),
      goodputOf(alone, 1, 2, 32, 0),
      'one-node shapes borrow nothing from multi-node measurements',
    );
  });
});
