import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyOwnCostates, type CostateJob } from './costates.js';
import { buildRoundJobs, defaultGoodputPolicyParams, type RoundJob } from './job-view.js';
import { job, limits, perf, snapshot } from './test-jobs.js';

/** A job with `remaining` 1-GPU seconds of work and the curve `speedup`. */
function view(remaining: number, speedup: (replicas: number) => number, max_replicas = 1024): CostateJob {
  return { remaining_estimate: remaining, max_replicas, speedup, weight: 0 };
}

test('with the same curve r^p for every job, the costates give heSRPT allocation shares', () => {
  // Maximizing sum c_i r_i^p over sum r_i = N gives r_i proportional to c_i^(1/(1-p)); heSRPT's
  // optimal shares for n jobs ranked from the largest (i = 1) are (i/n)^e - ((i-1)/n)^e, e = 1/(1-p).
  for (const p of [0.5, 0.75]) {
    const views = [400, 100, 300, 200].map((remaining) => view(remaining, (r) => Math.pow(r, p)));
    applyOwnCostates(views, 1024, 512, 1); // every size evaluated
    const e = 1 / (1 - p);
    const raw = views.map((v) => Math.pow(v.weight, e));
    const total = raw.reduce((sum, x) => sum + x, 0);
    const heSRPT = (i: number): number => Math.pow(i / 4, e) - Math.pow((i - 1) / 4, e);
    const expected = [heSRPT(1), heSRPT(4), heSRPT(2), heSRPT(3)];
    raw.forEach((x, j) =>
      assert.ok(
        Math.abs(x / total - (expected[j] as number)) < 1e-3,
        `p=${p} job ${j}: ${x / total} vs ${expected[j]}`,
      ),
    );
  }
});

test('a job that scales well is valued by its own curve, not by its rank alone', () => {
  // Linear jobs: the shorter one has all the value (SRPT). A shorter job that cannot use more
  // than one GPU gets a costate for that one GPU, and the longer, linear job is worth the rest.
  const linear = [view(100, (r) => r), view(200, (r) => r)];
  applyOwnCostates(linear, 8, 4, 1);
  assert.equal(linear[1]?.weight, 1 / 8);
  assert.equal(linear[0]?.weight, 2 / 8);
  const flatFirst = [view(100, () => 1), view(200, (r) => r)];
  applyOwnCostates(flatFirst, 8, 4, 1);
  assert.equal(flatFirst[0]?.weight, 2 - 7 / 8);
  // A higher count power raises the shorter job's costate.
  const crowded = [view(100, (r) => r), view(200, (r) => r)];
  applyOwnCostates(crowded, 8, 4, 1.5);
  assert.ok((crowded[0]?.weight as number) > 2 / 8);
  assert.equal(crowded[1]?.weight, 1 / 8);
});

test('own_costates: the policy weighs jobs by their costates and values speedup linearly', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  const jobs = [1, 2, 3, 4].map((i) => job(`j${i}`, { max_profiled_replicas: 4, model, remaining_samples: 1e6 * i }));
  const snap = snapshot(jobs, 2);
  const costated = buildRoundJobs(snap, { ...defaultGoodputPolicyParams, own_costates: true });
  const expected = buildRoundJobs(snap, defaultGoodputPolicyParams);
  applyOwnCostates(expected, 8, 4, defaultGoodputPolicyParams.costate_count_power);
  assert.deepEqual(
    costated.map((v) => v.weight),
    expected.map((v) => v.weight),
  );
  assert.ok(costated.every((v) => v.utility_power === 0));
  // Shorter jobs are worth more per unit of work.
  costated.slice(1).forEach((v, i) => assert.ok(v.weight < (costated[i] as RoundJob).weight));
});
