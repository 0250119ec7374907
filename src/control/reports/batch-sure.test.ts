/**
 * Batch decisions that need the gain to be sure (docs/policy.md): the lower end of the gain's
 * interval clears BATCH_MIN_GAIN, the claim never exceeds what the model can show for the
 * change, a change is not reversed before a measurement at its batch, and the learning-rate
 * factor follows the script's rule.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adascaleGain } from '../../goodput/efficiency.js';
import { stepCorrection } from '../../goodput/step-correction.js';
import { optimStepTime_s } from '../../goodput/throughput.js';
import { MIN_FIT_SPREAD } from '../../goodput/interval.js';
import type { ProfilePoint } from '../../goodput/types.js';
import { modelOf } from '../loop/snapshot.js';
import { BATCH_MIN_GAIN, batchGain, configFor } from './batch-config.js';
import { DIGITS_LIMITS, DIGITS_PERF, digitsJob, digitsStep } from './testing/digits-fixture.js';
import { BatchDecisions } from './batch-decisions.js';

const measured = digitsStep;
const limits = DIGITS_LIMITS;
const perf = DIGITS_PERF;
const digits = digitsJob;
/** The uncorrected fit's step time at `local_bsz` times `factor`, as one measured point. */
const point = (local_bsz: number, factor: number): ProfilePoint => {
  const t = optimStepTime_s(perf, 1, 1, local_bsz) * factor;
  return { num_nodes: 1, num_replicas: 1, local_bsz, accum_step_time_s: t, optim_step_time_s: t };
};

describe('batch decisions need a sure gain', () => {
  it('claims no more than the size of the change, though a correction measured on a busy host bends the curve', () => {
    // The batch in force measured 5x slower than the fit (a busy host), its neighbours as predicted.
    const correction = stepCorrection(perf, [point(32, 1), point(64, 5), point(128, 1), point(256, 1)]);
    const model = modelOf(digits({ correction }))!;
    const from = { local_bsz: 64, accum_steps: 0 };
    const to = { local_bsz: 69, accum_steps: 0 }; // +8%
    const claim = batchGain(model, 1, 1, from, to);
    assert.ok(claim.gain <= 69 / 64 + 1e-12 && claim.hi <= 69 / 64 + 1e-12, JSON.stringify(claim));
    assert.ok(claim.gain <= 1.5, 'no claim above x1.5 for a change under 10%');
    // So an optional change of 8% can never be sure to gain BATCH_MIN_GAIN (x1.05) past the spread.
    assert.ok(claim.lo < 1 + BATCH_MIN_GAIN);
  });

  it('keeps the batch in force when the lower end of the gain is below BATCH_MIN_GAIN, however large the point gain', () => {
    const j = digits();
    const wide = digits({
      correction: stepCorrection(perf, [point(16, 1.6), point(32, 0.6), point(128, 1.6), point(256, 0.6)]),
    });
    const from = { local_bsz: 32, accum_steps: 1 };
    const point_choice = configFor(j, measured(32, 1), undefined, from);
    assert.notEqual(point_choice.batch_size, 64, 'without residuals the point gain moves it');
    const g = batchGain(modelOf(wide)!, 1, 1, from, configFor(j, measured(32, 1)));
    assert.ok(g.lo < 1 + BATCH_MIN_GAIN, `lower end ${g.lo}`);
    const kept = configFor(wide, measured(32, 1), undefined, from);
    assert.equal(kept.batch_size, 64, 'with a wide interval it keeps 64');
  });

  it('widens the interval of a batch the job never ran within what it measured, but not of one past the largest', () => {
    // Measured at local 32 and 256 only, both as the fit predicts: the residuals are at the 3% floor.
    const model = modelOf(digits({ correction: stepCorrection(perf, [point(32, 1), point(256, 1)]) }))!;
    const from = { local_bsz: 256, accum_steps: 0 };
    const measuredTo = batchGain(model, 1, 1, from, { local_bsz: 32, accum_steps: 0 });
    assert.ok(
      Math.abs(measuredTo.lo / measuredTo.gain - Math.exp(-MIN_FIT_SPREAD)) < 1e-9,
      'a measured batch: residuals',
    );
    // 90 lies ln(90/32) ~ 1.03 from the nearest measured batch: its lower end is at least 0.2 further down.
    const inside = batchGain(model, 1, 1, from, { local_bsz: 90, accum_steps: 0 });
    assert.ok(inside.lo / inside.gain < Math.exp(-MIN_FIT_SPREAD - 0.2), JSON.stringify(inside));
    // 1024 is past the largest measured (exploration): BATCH_MIN_GAIN on the residuals' lower end decides it.
    const past = batchGain(model, 1, 1, from, { local_bsz: 1024, accum_steps: 0 });
    assert.ok(Math.abs(past.lo / past.gain - Math.exp(-MIN_FIT_SPREAD)) < 1e-9, JSON.stringify(past));
  });

  it('does not reverse a batch change before a report measured at the batch it set', () => {
    const d = new BatchDecisions(0);
    const first = d.decide(digits(), 0, measured(32, 1), 0);
    assert.ok(first.change && first.config.batch_size > 64, 'the first change grows the batch');
    // A refit of the same points now asks for a small batch: no measurement at the new one yet.
    const small = digits({ grad: { sqr: 1, var: 4 } });
    const early = d.decide(small, 0, measured(32, 1), 1000);
    assert.equal(early.change, undefined, `no reversal before a measurement: ${early.change?.reason}`);
    assert.equal(early.config.batch_size, first.config.batch_size);
    const late = d.decide(small, 0, measured(first.config.local_bsz, first.config.accum_steps), 2000);
    assert.ok(late.change && late.config.batch_size < first.config.batch_size, 'measured: it may shrink');
  });

  it("scales the learning rate by the script's rule and says which", () => {
    const d = new BatchDecisions(0);
    const adam = d.decide(digits(), 0, measured(32, 1), 0, undefined, 'adamscale');
    const scale = adam.config.batch_size / limits.init_batch_size;
    assert.ok(Math.abs(adam.config.lr_scale - Math.sqrt(adascaleGain({ sqr: 1, var: 40 }, scale))) < 1e-12);
    assert.match(adam.change!.reason, /learning rate x[\d.]+ \(square root of AdaScale, for Adam\)/);
    const sgd = new BatchDecisions(0).decide(digits(), 0, measured(32, 1), 0);
    assert.match(sgd.change!.reason, /learning rate x[\d.]+ \(AdaScale\)/);
    assert.ok(sgd.config.lr_scale > adam.config.lr_scale);
  });
});
