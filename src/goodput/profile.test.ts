import assert from 'node:assert/strict';
import { test } from 'node:test';
import { profilePoint } from './profile.js';

test('profilePoint splits a step into accumulation and optimizer time', () => {
  const m = { num_nodes: 1, num_replicas: 2, local_bsz: 64, accum_steps: 1, step_time_s: 0.3, sync_time_s: 0.05 };
  const p = profilePoint(m);
  assert.deepEqual([p.num_nodes, p.num_replicas, p.local_bsz], [1, 2, 64]);
  assert.ok(Math.abs(p.accum_step_time_s - 0.125) < 1e-12, 'accum = (step - sync) / (a + 1)');
  assert.ok(Math.abs(p.optim_step_time_s - 0.175) < 1e-12, 'optim = step - a * accum');
  assert.deepEqual(
    profilePoint({ ...m, accum_steps: 0, step_time_s: 0.01, sync_time_s: 0.02 }).accum_step_time_s,
    0,
    'clock noise counts as 0',
  );
});
