import assert from 'node:assert/strict';
import { insightLines } from '../../cli/job-render.js';
import { describe, it } from 'node:test';
import { bestGoodput } from '../../goodput/speedup.js';
import { stepCorrection } from '../../goodput/step-correction.js';
import { optimStepTime_s } from '../../goodput/throughput.js';
import { jobRecordFixture, storedProfileFixture } from '../../store/job-fixture.js';
import type { JobEvent, Measurement } from '../../store/types.js';
import { batchDecisionInForce, currentSpeedup, jobInsight, resizeReason } from './insight.js';
import { modelOf } from './snapshot.js';
import { measuredStepFixture } from '../../goodput/testing/perf-fixture.js';

const job = jobRecordFixture;

const measured = (local_bsz: number, accum_steps: number, replicas: number, step_time_s: number): Measurement =>
  measuredStepFixture({ time_s: 1, step: 10, num_replicas: replicas, local_bsz, accum_steps, step_time_s });

const ctx = { policy: 'goodput', idle: 3, unit: 'CPU slot' };

describe('resizeReason', () => {
  it('says grew with the predicted goodput ratio and the idle devices', () => {
    const j = job();
    const ratio = bestGoodput(modelOf(j)!, 1, 3) / bestGoodput(modelOf(j)!, 1, 1);
    assert.equal(
      resizeReason(j, 1, 3, ctx),
      `grew 1 -> 3 (goodput: predicted goodput on 3 x${ratio.toFixed(1)} relative to its current 1 CPU slot, each at its best batch; 3 CPU slots idle)`,
    );
  });

  it('says shrank and what it frees; without a model, that it explores', () => {
    assert.match(
      resizeReason(job(), 3, 1, ctx),
      /^shrank 3 -> 1 \(goodput: predicted goodput on 1 x0\.\d\d relative to its current 3 CPU slots, each at its best batch; frees 2 CPU slots for other jobs\)$/,
    );
    assert.equal(
      resizeReason(job({ perf: null }), 1, 2, { ...ctx, idle: 1 }),
      'grew 1 -> 2 (goodput: no throughput model yet; 1 CPU slot idle; exploring a size not measured yet)',
    );
  });

  it('says first start, resume and preemption', () => {
    assert.equal(
      resizeReason(job({ launches: 0, perf: null }), 0, 1, { ...ctx, unit: 'GPU' }),
      'first start on 1 GPU (goodput: no throughput measured yet, 3 GPUs idle)',
    );
    assert.match(
      resizeReason(job({ checkpoint_on_stop: true }), 0, 2, ctx),
      /^resumes from its checkpoint on 2 CPU slots \(goodput: predicted speedup x[\d.]+ over 1 replica, 3 CPU slots idle\)$/,
    );
    assert.equal(
      resizeReason(job({ checkpoint_on_stop: true }), 2, 0, ctx),
      'preempted 2 -> 0 (goodput: its 2 CPU slots go to other jobs; resumes from its checkpoint)',
    );
    // Without proof of a checkpoint the words say what the stop costs.
    assert.equal(
      resizeReason(job({ checkpoint_on_stop: false, checkpoint_at_ms: null }), 2, 0, ctx),
      'preempted 2 -> 0 (goodput: its 2 CPU slots go to other jobs; restarts from its beginning (no checkpoint the control plane knows of))',
    );
  });
});

describe('jobInsight', () => {
  it('never shows a speedup now above the predicted best, however fast the measurement', () => {
    for (const step_time_s of [0.0001, 0.5, 50]) {
      for (const replicas of [1, 2, 3]) {
        const i = jobInsight(
          job({ allocation: Array(replicas).fill(0), devices: [...Array(replicas).keys()] }),
          measured(64, 0, replicas, step_time_s),
        );
        assert.ok(
          i.speedup! <= i.predicted!.speedup + 1e-9,
          `${i.speedup} now vs best ${i.predicted!.speedup} (${replicas} replicas, step ${step_time_s} s)`,
        );
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
    assert.equal(i.speedup, ratio(1), "the model at the job's allocation now (1 replica)");
    const stopped = jobInsight(job({ allocation: [], devices: [] }), measured(64, 1, 2, 0.5));
    assert.equal(stopped.speedup, ratio(2), "without devices: the model at the latest measurement's 2 replicas");
    const none = jobInsight(job({ perf: null, grad: null }), undefined);
    const fields = ['batch', 'efficiency', 'goodput', 'lr_scale', 'predicted', 'speedup', 'throughput_samples_s'];
    assert.deepEqual(Object.keys(none).sort(), fields);
    assert.ok(
      Object.values(none).every((v) => v === null),
      `nothing known: ${JSON.stringify(none)}`,
    );
  });
});

describe('batchDecisionInForce and the insight of a job told a new batch', () => {
  const event = (at_ms: number, kind: JobEvent['kind'], data: Record<string, unknown>): JobEvent => ({
    id: at_ms,
    job_id: 'j',
    at_ms,
    actor: 'scheduler',
    kind,
    from_state: 'running',
    to_state: 'running',
    reason: '',
    data,
  });
  const to = { local_bsz: 58, accum_steps: 1, replicas: 1, total: 116 };
  const told = event(200, 'batch-size', {
    from: { local_bsz: 40, accum_steps: 1, replicas: 1, total: 80 },
    to,
    lr_scale: 1.37,
  });

  it('is the newest batch-size event since the latest launch', () => {
    assert.deepEqual(
      batchDecisionInForce(job({ launched_at_ms: 100 }), [
        event(50, 'batch-size', { to: { ...to, total: 64 }, lr_scale: 1 }),
        told,
        event(300, 'profile-used', {}),
      ]),
      { to, lr_scale: 1.37 },
    );
    assert.equal(
      batchDecisionInForce(job({ launched_at_ms: 250 }), [told]),
      undefined,
      'told before the running attempt was launched',
    );
    assert.equal(batchDecisionInForce(job({ launched_at_ms: null }), [told]), undefined, 'not running');
  });

  it('shows the batch and learning-rate scale of the decision, as its event states them', () => {
    const j = job({ launched_at_ms: 100 });
    const decision = batchDecisionInForce(j, [told])!;
    // The job has not applied it yet: its latest report still shows 80.
    const i = jobInsight(j, measured(40, 1, 1, 0.1), undefined, decision);
    assert.deepEqual(i.batch, to);
    assert.equal(i.lr_scale, 1.37);
    assert.equal(i.throughput_samples_s, 800, 'measured at the batch it ran');
    const rescaled = jobInsight(j, measured(40, 0, 2, 0.1), undefined, decision);
    assert.equal(rescaled.batch!.total, 80, 'a decision for another replica count is not in force');
  });

  it("names the script's learning-rate rule when its decision event does (Adam: square root), and shows it", () => {
    const j = job({ launched_at_ms: 100 });
    const adam = event(200, 'batch-size', { ...told.data, lr_rule: 'adamscale' });
    const decision = batchDecisionInForce(j, [adam])!;
    assert.equal(decision.lr_rule, 'adamscale');
    const i = jobInsight(j, measured(40, 1, 1, 0.1), undefined, decision);
    assert.equal(i.lr_rule, 'adamscale');
    assert.match(insightLines(i).join('\n'), /learning rate x1\.37 \(square root of AdaScale, for Adam\)/);
    const old = jobInsight(j, measured(40, 1, 1, 0.1), undefined, batchDecisionInForce(j, [told])!);
    assert.match(insightLines(old).join('\n'), /learning rate x1\.37 \(AdaScale\)/);
  });

  it('never predicts a best batch above the job cap (rounding up the micro-batch)', () => {
    // Noisy gradients: the best batch on 3 replicas is the largest, 512 = 3 x 170.7.
    const base = job({
      allocation: [0, 0, 0],
      devices: [0, 1, 2],
      grad: { sqr: 1, var: 1e5 },
      limits: { init_batch_size: 64, max_batch_size: 512, min_local_bsz: 8, max_local_bsz: 256, accumulation: true },
    });
    const j = { ...base, spec: { ...base.spec, max_replicas: 3 } };
    const i = jobInsight(j, measured(40, 0, 3, 0.1));
    assert.equal(i.predicted!.replicas, 3);
    assert.equal(i.predicted!.batch_size, 510);
  });
});

describe('currentSpeedup', () => {
  it("is the insight's speedup now, corrected by the profile the job's model starts from", () => {
    const perf = job().perf!;
    // Earlier jobs of the key measured 2 replicas twice as slow as the job's fit predicts.
    const slow = {
      num_nodes: 1,
      num_replicas: 2,
      local_bsz: 64,
      accum_step_time_s: 0.1,
      optim_step_time_s: 2 * optimStepTime_s(perf, 1, 2, 64),
    };
    const profile = storedProfileFixture('train', 'cpu', [slow], perf);
    // Its refit on its points and the profile's saved their correction with the fit (model/job-fit.ts).
    const onTwo = job({ allocation: [0, 0], devices: [0, 1], correction: stepCorrection(perf, profile.points) });
    const alone = job({ allocation: [0, 0], devices: [0, 1] });
    const latest = measured(64, 0, 2, 0.5);
    const corrected = currentSpeedup(onTwo, latest, profile)!;
    assert.equal(corrected, jobInsight(onTwo, latest, profile).speedup);
    assert.equal(currentSpeedup(alone, latest), jobInsight(alone, latest).speedup);
    assert.ok(
      corrected < currentSpeedup(alone, latest)! - 0.1,
      `the profile's slower measurement lowers it: ${corrected} vs ${currentSpeedup(alone, latest)}`,
    );
    assert.equal(currentSpeedup(job({ perf: null, grad: null }), latest), null, 'no model');
    assert.equal(currentSpeedup(job({ allocation: [], devices: [] }), undefined), null, 'no placement');
  });
});
