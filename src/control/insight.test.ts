import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyProfile } from '../goodput/key-profile.js';
import { bestGoodput } from '../goodput/speedup.js';
import { stepCorrection } from '../goodput/step-correction.js';
import { optimStepTime_s } from '../goodput/throughput.js';
import { jobRecordFixture } from '../store/job-fixture.js';
import type { Measurement, StoredKeyProfile } from '../store/types.js';
import { BatchDecisions, batchChange, currentSpeedup, jobInsight, resizeReason } from './insight.js';
import { modelOf } from './snapshot.js';

const job = jobRecordFixture;

const measured = (local_bsz: number, accum_steps: number, replicas: number, step_time_s: number): Measurement => ({
  time_s: 1, step: 10, num_nodes: 1, num_replicas: replicas, local_bsz, accum_steps, step_time_s, sync_time_s: 0,
});

const ctx = { policy: 'goodput', idle: 3, unit: 'CPU slot' };

describe('resizeReason', () => {
  it('says grew with the predicted goodput ratio and the idle devices', () => {
    const j = job();
    const ratio = bestGoodput(modelOf(j)!, 1, 3) / bestGoodput(modelOf(j)!, 1, 1);
    assert.equal(resizeReason(j, 1, 3, ctx), `grew 1 -> 3 (goodput: predicted goodput x${ratio.toFixed(1)}, 3 CPU slots idle)`);
  });

  it('says shrank and what it frees; without a model, that it explores', () => {
    assert.match(resizeReason(job(), 3, 1, ctx), /^shrank 3 -> 1 \(goodput: predicted goodput x0\.\d\d, frees 2 CPU slots for other jobs\)$/);
    assert.equal(resizeReason(job({ perf: null }), 1, 2, { ...ctx, idle: 1 }), 'grew 1 -> 2 (goodput: no throughput model yet, 1 CPU slot idle, exploring a size not measured yet)');
  });

  it('says first start, resume and preemption', () => {
    assert.equal(resizeReason(job({ launches: 0, perf: null }), 0, 1, { ...ctx, unit: 'GPU' }), 'first start on 1 GPU (goodput: no throughput measured yet, 3 GPUs idle)');
    assert.match(resizeReason(job({ checkpoint_on_stop: true }), 0, 2, ctx), /^resumes from its checkpoint on 2 CPU slots \(goodput: predicted speedup x[\d.]+ over 1 replica, 3 CPU slots idle\)$/);
    assert.equal(resizeReason(job({ checkpoint_on_stop: true }), 2, 0, ctx), 'preempted 2 -> 0 (goodput: its 2 CPU slots go to other jobs; resumes from its checkpoint)');
    // Without proof of a checkpoint the words say what the stop costs.
    assert.equal(resizeReason(job({ checkpoint_on_stop: false, checkpoint_at_ms: null }), 2, 0, ctx), 'preempted 2 -> 0 (goodput: its 2 CPU slots go to other jobs; restarts from its beginning (no checkpoint the control plane knows of))');
  });
});

describe('batchChange and BatchDecisions', () => {
  it('words a batch-size change with its shape, learning rate and prediction; none when equal', () => {
    const j = job();
    const change = batchChange(j, measured(64, 0, 1, 0.08), { local_bsz: 128, accum_steps: 1, batch_size: 256, lr_scale: 2.5 });
    assert.match(change!.reason, /^batch size grew 64 -> 256 \(128 x 2 x 1, local x accumulation x replicas\), learning rate x2\.50: predicted goodput x[\d.]+, statistical efficiency 0\.\d\d$/);
    assert.deepEqual(change!.data.to, { local_bsz: 128, accum_steps: 1, replicas: 1, total: 256 });
    assert.equal(batchChange(j, measured(64, 0, 1, 0.08), { local_bsz: 64, accum_steps: 0, batch_size: 64, lr_scale: 1 }), undefined);
  });

  it('records one event per decision, not one per report until the job applies it', () => {
    const d = new BatchDecisions();
    const j = job();
    const to = { local_bsz: 128, accum_steps: 0, batch_size: 128, lr_scale: 1.5 };
    assert.ok(d.observe(j, measured(64, 0, 1, 0.08), to));
    assert.equal(d.observe(j, measured(64, 0, 1, 0.08), to), undefined, 'same decision again');
    assert.equal(d.observe(j, measured(128, 0, 1, 0.14), to), undefined, 'applied');
    assert.ok(d.observe(j, measured(128, 0, 1, 0.14), { ...to, local_bsz: 64, batch_size: 64 }), 'a new decision');
  });
});

describe('jobInsight', () => {
  it('never shows a speedup now above the predicted best, however fast the measurement', () => {
    for (const step_time_s of [0.0001, 0.5, 50]) {
      for (const replicas of [1, 2, 3]) {
        const i = jobInsight(job({ allocation: Array(replicas).fill(0), devices: [...Array(replicas).keys()] }), measured(64, 0, replicas, step_time_s));
        assert.ok(i.speedup! <= i.predicted!.speedup + 1e-9, `${i.speedup} now vs best ${i.predicted!.speedup} (${replicas} replicas, step ${step_time_s} s)`);
      }
    }
  });

  it('gives batch, throughput, efficiency, goodput and speedups; nulls while unknown', () => {
    const i = jobInsight(job(), measured(64, 1, 2, 0.5));
    assert.deepEqual(i.batch, { local_bsz: 64, accum_steps: 1, replicas: 2, total: 256 });
    assert.equal(i.throughput_samples_s, 512);
    assert.ok(i.efficiency! > 0 && i.efficiency! < 1);
    assert.equal(i.goodput, 512 * i.efficiency!);
    assert.ok(i.lr_scale! > 1 && i.lr_scale! < 4);
    assert.ok(i.predicted!.replicas > 1 && i.predicted!.speedup > 1);
    const ratio = (r: number) => bestGoodput(modelOf(job())!, 1, r) / bestGoodput(modelOf(job())!, 1, 1);
    assert.equal(i.speedup, ratio(1), 'the model at the job\'s allocation now (1 replica)');
    const stopped = jobInsight(job({ allocation: [], devices: [] }), measured(64, 1, 2, 0.5));
    assert.equal(stopped.speedup, ratio(2), 'without devices: the model at the latest measurement\'s 2 replicas');
    const none = jobInsight(job({ perf: null, grad: null }), undefined);
    assert.deepEqual(none, { batch: null, lr_scale: null, throughput_samples_s: null, efficiency: null, goodput: null, speedup: null, predicted: null });
  });
});

describe('currentSpeedup', () => {
  it('is the insight\'s speedup now, corrected by the profile the job\'s model starts from', () => {
    const perf = job().perf!;
    // Earlier jobs of the key measured 2 replicas twice as slow as the job's fit predicts.
    const slow = { num_nodes: 1, num_replicas: 2, local_bsz: 64, accum_step_time_s: 0.1, optim_step_time_s: 2 * optimStepTime_s(perf, 1, 2, 64) };
    const profile: StoredKeyProfile = { ...emptyProfile('train', 'cpu'), points: [slow], jobs: 1, job_ids: ['earlier'], perf, limits: null, updated_at_ms: 0 };
    // Its refit on its points and the profile's saved their correction with the fit (model/job-fit.ts).
    const onTwo = job({ allocation: [0, 0], devices: [0, 1], correction: stepCorrection(perf, profile.points) });
    const alone = job({ allocation: [0, 0], devices: [0, 1] });
    const latest = measured(64, 0, 2, 0.5);
    const corrected = currentSpeedup(onTwo, latest, profile)!;
    assert.equal(corrected, jobInsight(onTwo, latest, profile).speedup);
    assert.equal(currentSpeedup(alone, latest), jobInsight(alone, latest).speedup);
    assert.ok(corrected < currentSpeedup(alone, latest)! - 0.1, `the profile's slower measurement lowers it: ${corrected} vs ${currentSpeedup(alone, latest)}`);
    assert.equal(currentSpeedup(job({ perf: null, grad: null }), latest), null, 'no model');
    assert.equal(currentSpeedup(job({ allocation: [], devices: [] }), undefined), null, 'no placement');
  });
});
