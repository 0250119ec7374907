/**
 * Decisions that need the gain to be sure (docs/policy.md): a resize is valued at the lower end of
 * its speedup's 80% interval, its claim is the gain it was decided with, and the reverse of a
 * resize waits for a measurement at the size it gave.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PolicyJob } from '../../core/cluster.js';
import { stepCorrection } from '../../goodput/step-correction.js';
import { optimStepTime_s } from '../../goodput/throughput.js';
import { GoodputPolicy } from './index.js';
import { buildRoundJobs, defaultGoodputPolicyParams } from './job-view.js';
import { chooseReplicaCounts, sureShare } from './sizing.js';
import { job, limits, perf, snapshot } from './test-jobs.js';
import { resizeInterval } from './unmeasured.js';
import { fixedBatchChoice } from '../../goodput/optimize.js';
import { MIN_FIT_SPREAD } from '../../goodput/interval.js';

const grad = { sqr: 1, var: 20 };
/** A job measured up to 4 replicas, running on 1 of node 0's 4 GPUs for an hour. */
const running = (fields: Partial<PolicyJob> = {}): PolicyJob =>
  job('a', {
    model: { perf, grad, limits },
    max_profiled_replicas: 4,
    attained_service_gpu_s: 3600,
    allocated_since_s: 0,
    ...fields,
  });

/** A correction whose measured / predicted factors spread by e^(+-spread) around 1. */
function spreadCorrection(spread: number) {
  const points = [32, 64, 128, 256].map((local_bsz, i) => {
    const t = optimStepTime_s(perf, 1, 1, local_bsz) * Math.exp(i % 2 === 0 ? spread : -spread);
    return { num_nodes: 1, num_replicas: 1, local_bsz, accum_step_time_s: t, optim_step_time_s: t };
  });
  return stepCorrection(perf, points);
}

describe('goodput policy: resizes need a sure gain', () => {
  it('grows a job for a gain the point estimate shows, but not once the lower end of its interval cannot pay the restart', () => {
    const snap = snapshot([running()], 1, { a: [0] });
    const params = { ...defaultGoodputPolicyParams, restart_delay_s: 600 };
    const views = buildRoundJobs(snap, params);
    const view = views[0]!;
    const point = chooseReplicaCounts(views, 4, 4)[0]!;
    assert.ok(point > 1, `the point estimate grows it (to ${point})`);
    const gain = view.speedup(point) / view.speedup(1);
    // An interval whose lower end is below the restart's keep over the gain: not sure enough.
    view.gain_interval = { lo: Math.log((0.9 * 1) / (gain * view.restart_keep)), hi: 0.3 };
    assert.ok(sureShare(view) * gain * view.restart_keep < 1);
    assert.equal(chooseReplicaCounts(views, 4, 4)[0], 1, 'kept at 1: the sure gain does not clear the restart');
  });

  it("reads the interval from the model's correction, and claims the gain it decided with, within what the model can show", () => {
    const correction = spreadCorrection(0.2);
    const j = running({ model: { perf, grad, limits, correction } });
    const view = buildRoundJobs(snapshot([j], 1, { a: [0] }), defaultGoodputPolicyParams)[0]!;
    assert.ok(
      view.gain_interval && view.gain_interval.lo < -0.1 && view.gain_interval.hi > 0.1,
      `${JSON.stringify(view.gain_interval)}`,
    );
    const decision = new GoodputPolicy().decide(snapshot([j], 1, { a: [0] }));
    const to = decision.allocations.a?.length ?? 0;
    if (to > 1) {
      const claim = decision.gains?.a;
      assert.ok(claim, 'a resize carries its claim');
      assert.ok(claim.lo < claim.gain && claim.gain < claim.hi && claim.gain <= to, JSON.stringify(claim));
      // The residuals' interval, widened by the distance of the new size from the measured ones.
      const interval = resizeInterval(view.gain_interval, view.distance, 1, to)!;
      assert.ok(Math.abs(claim.lo / claim.gain - Math.exp(interval.lo)) < 1e-9);
      assert.ok(interval.lo <= view.gain_interval!.lo);
    }
    const kept = new GoodputPolicy().decide(snapshot([running()], 1, { a: [0, 0, 0, 0] }));
    assert.equal(kept.gains, undefined, 'no claim without a resize');
  });

  it('does not grow a job back after a shrink until it has been measured at the smaller size', () => {
    const policy = new GoodputPolicy();
    const shrunk = running({ last_resize: { grew: false, measured_since: false } });
    assert.equal(policy.decide(snapshot([shrunk], 1, { a: [0] })).allocations.a?.length, 1);
    const measured = running({ last_resize: { grew: false, measured_since: true } });
    assert.ok((policy.decide(snapshot([measured], 1, { a: [0] })).allocations.a?.length ?? 0) > 1);
  });

  it('does not shrink a job after a growth until it has been measured at the larger size, though a shorter job arrives', () => {
    const policy = new GoodputPolicy();
    const short = job('b', {
      model: { perf, grad, limits },
      max_profiled_replicas: 4,
      remaining_samples: 1e4,
      submitted_at_s: 3500,
    });
    const long = (measured_since: boolean) =>
      running({ remaining_samples: 1e9, last_resize: { grew: true, measured_since } });
    const before = policy.decide(snapshot([long(false), short], 1, { a: [0, 0, 0, 0] }));
    assert.equal(before.allocations.a?.length, 4, 'keeps its 4 GPUs: no measurement at 4 yet');
    const after = policy.decide(snapshot([long(true), short], 1, { a: [0, 0, 0, 0] }));
    assert.ok(
      (after.allocations.a?.length ?? 0) < 4,
      `measured at 4: it may give GPUs to the shorter job (${after.allocations.a?.length})`,
    );
  });
});

/** A fixed batch of 256 split by the one batch rule: the local batch each size runs at is known. */
const FIXED = 256;
const localAt = (replicas: number): number => fixedBatchChoice({ perf, grad, limits }, 1, replicas, FIXED).local_bsz;

/** A correction measured at `sizes` (one node, the fixed batch's local batch), as predicted by the fit. */
const measuredAt = (sizes: readonly number[]) =>
  stepCorrection(
    perf,
    sizes.map((num_replicas) => {
      const local_bsz = localAt(num_replicas);
      const t = optimStepTime_s(perf, 1, num_replicas, local_bsz);
      return { num_nodes: 1, num_replicas, local_bsz, accum_step_time_s: t, optim_step_time_s: t };
    }),
  );

describe('goodput policy: sizes never measured are not predicted surely', () => {
  /** A job at 1 replica, capped at `cap`, whose model measured `sizes` (its own or its key's). */
  const atOne = (sizes: readonly number[], cap: number, fields: Partial<PolicyJob> = {}) =>
    running({
      model: { perf, grad, limits, correction: measuredAt(sizes) },
      fixed_batch_size: FIXED,
      max_replicas: cap,
      ...fields,
    });
  // A restart costs about a third of the hold (no minimum slice): only a gain surely above about x1.5 pays it.
  const params = { restart_delay_s: 2000, min_slice_restarts: 0 };

  it('holds a growth to a size the job never ran, which the residuals alone would make', () => {
    const job = atOne([1, 4], 2);
    const views = buildRoundJobs(snapshot([job], 1, { a: [0] }), { ...defaultGoodputPolicyParams, ...params });
    const view = views[0]!;
    assert.equal(view.distance?.(1), 0);
    assert.ok(Math.abs(view.distance!(2) - Math.LN2) < 1e-9, 'size 2 is ln 2 from the measured sizes');
    assert.ok(sureShare(view, 2) < sureShare(view) - 0.1, 'its interval is wider than the residuals');
    assert.equal(new GoodputPolicy(params).decide(snapshot([job], 1, { a: [0] })).allocations.a?.length, 1);
    // The same views read with the residuals alone grow it: the widening is what holds it.
    const residualsOnly = views.map((v) => ({ ...v, distance: () => 0 }));
    assert.equal(chooseReplicaCounts(residualsOnly, 4, 4)[0], 2, 'with the residuals alone it grows 1 -> 2');
  });

  it('grows once the job has measured that size, and states the widened interval in its claim', () => {
    const decision = new GoodputPolicy(params).decide(snapshot([atOne([1, 2, 4], 2)], 1, { a: [0] }));
    assert.equal(decision.allocations.a?.length, 2);
    const claim = decision.gains?.a;
    assert.ok(claim && Math.abs(claim.lo / claim.gain - Math.exp(-MIN_FIT_SPREAD)) < 1e-9, JSON.stringify(claim));
    // Without the measurement at 2, the claim of a growth there (default restart delay) is wider.
    const wide = new GoodputPolicy().decide(snapshot([atOne([1, 4], 2)], 1, { a: [0] })).gains?.a;
    assert.ok(wide && wide.lo / wide.gain < Math.exp(-MIN_FIT_SPREAD - 0.15), JSON.stringify(wide));
  });

  it('after a shrink, grows back only to a size it measured', () => {
    // Shrunk 4 -> 1 and measured at 1 since; capped at 3, the only growth is to 2 or 3, never run.
    const shrunk = atOne([1, 4], 3, { last_resize: { grew: false, measured_since: true } });
    const snap = snapshot([shrunk], 1, { a: [0] });
    const policyParams = { min_slice_restarts: 0 };
    assert.equal(new GoodputPolicy(policyParams).decide(snap).allocations.a?.length, 1);
    const views = buildRoundJobs(snap, { ...defaultGoodputPolicyParams, ...policyParams });
    assert.deepEqual([...(views[0]!.grow_back_to ?? [])].sort(), [1, 4]);
    const free = views.map((v) => ({ ...v, grow_back_to: undefined }));
    assert.equal(chooseReplicaCounts(free, 4, 4, defaultGoodputPolicyParams)[0], 3, 'without the rule: 1 -> 3');
    // Capped at 4 it may grow back to 4, where it has measured.
    const to4 = atOne([1, 4], 4, { last_resize: { grew: false, measured_since: true } });
    assert.equal(new GoodputPolicy(policyParams).decide(snapshot([to4], 1, { a: [0] })).allocations.a?.length, 4);
  });
});
