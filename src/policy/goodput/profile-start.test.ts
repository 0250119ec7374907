import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoodputPolicy, goodputPolicy } from './index.js';
import { job, limits, perf, snapshot } from './test-jobs.js';

// Jobs whose model comes from their key's profile.

test("a new job whose model comes from its key's profile starts at its efficient size", () => {
  const model = { perf, grad: { sqr: 0.01, var: 10 }, limits };
  // Never run, but earlier jobs of its key measured up to 16 GPUs.
  const profiled = job('p', {
    model,
    max_profiled_replicas: 16,
    profile_key: 'resnet',
    model_from_profile: true,
    remaining_samples: 1e8,
  });
  const size = new GoodputPolicy().decide(snapshot([profiled], 4)).allocations.p?.length ?? 0;
  assert.ok(size >= 8, `started on ${size} GPUs`);
  // Without the profile the same job starts on one GPU (its model is unknown).
  const fresh = job('p', { remaining_samples: 1e8 });
  assert.equal(new GoodputPolicy().decide(snapshot([fresh], 4)).allocations.p?.length, 1);
});

test('the profile sizes count as measured: no discount of the predicted gain up to them', () => {
  const model = { perf, grad: { sqr: 0.01, var: 10 }, limits };
  const fromProfile = job('p', { model, max_profiled_replicas: 16, model_from_profile: true, remaining_samples: 1e8 });
  const ownOnly = job('p', { model, max_profiled_replicas: 2, remaining_samples: 1e8 });
  const sizeOf = (j: typeof fromProfile): number =>
    new GoodputPolicy({ unmeasured_gain_share: 0 }).decide(snapshot([j], 4)).allocations.p?.length ?? 0;
  assert.ok(sizeOf(fromProfile) > 2, 'grows to the sizes its key measured');
  assert.equal(sizeOf(ownOnly), 2, 'a job measured only on 2 GPUs stays there with share 0');
});

test('profiles is a knob of the goodput policy, on by default', () => {
  assert.equal(new GoodputPolicy().uses_profiles, true);
  assert.equal(new GoodputPolicy({ profiles: false }).uses_profiles, false);
  assert.equal(goodputPolicy.params?.profiles, true);
  assert.equal(new GoodputPolicy().uses_network_model, false);
  assert.equal(new GoodputPolicy({ network_model: true }).uses_network_model, true);
});
