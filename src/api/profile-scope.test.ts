/**
 * Profiles are per user unless the server shares them (`goodput up --shared-profiles`): one
 * user's job that measured a key cannot change how another user's job of the key starts. Real
 * store, API and controller in process (the scheduler's rule: Controller.profilesFor).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashToken, jobToken } from '../control/tokens.js';
import { inProcessApi } from './testing/in-process.js';

const limits = { init_batch_size: 64, max_batch_size: 4096, min_local_bsz: 32, max_local_bsz: 512, accumulation: true };
const m = (step: number, replicas: number, step_time_s: number) => ({
  time_s: 1.7e9 + step,
  step,
  num_nodes: 1,
  num_replicas: replicas,
  local_bsz: 64,
  accum_steps: 0,
  step_time_s,
  sync_time_s: 0.01,
  grad_sqr: 1,
  grad_var: 20,
  samples: step * 64 * replicas,
  remaining_samples: 64_000,
});

/** Alice's job of key `resnet` runs on 2 slots and reports there; bob then submits `resnet.py`. */
async function aliceThenBob(shared: boolean) {
  const api = await inProcessApi({ policy: 'goodput', shared_profiles: shared });
  await api.store.putToken({ hash: hashToken('gpu_alice'), user: 'alice', admin: false, created_at_ms: 0 });
  await api.store.putToken({ hash: hashToken('gpu_bob'), user: 'bob', admin: false, created_at_ms: 0 });
  const submit = async (user: string) => {
    const r = await api.call('POST', '/v1/jobs', `gpu_${user}`, {
      name: `${user}-train`,
      command: ['python3', 'resnet.py'],
      workdir: api.dir,
      max_replicas: 2,
      check_script: false,
    });
    assert.equal(r.status, 201, r.text);
    return r.json.id as string;
  };
  const alice = await submit('alice');
  await api.store.assignJob(alice, { allocation: [0, 0], devices: [0, 1] }, 0, 'test', 'two slots');
  const replica = (rank: number) => ({
    rank,
    device: rank,
    node: 'local',
    launch_id: '',
    pid: 1,
    proc_start: '',
    log_path: '/dev/null',
    started_at_ms: 0,
  });
  await api.store.launchJob(alice, [replica(0), replica(1)], 'test', 'launched');
  const reported = await api.call('POST', `/v1/jobs/${alice}/reports`, jobToken(api.secret, alice), {
    attempt: 0,
    limits,
    reports: [1, 2, 3, 4].map((s) => m(s, 2, 0.05)),
  });
  assert.equal(reported.status, 200, reported.text);
  const bob = await submit('bob');
  const profiles = await api.controller.profilesFor([(await api.store.getJob(bob))!]);
  return { api, bob, profile: profiles.get(bob) };
}

describe('profile scope', () => {
  it("per user by default: alice's 2-replica measurements of `resnet` do not start bob's `resnet.py`", async () => {
    const { api, profile } = await aliceThenBob(false);
    try {
      assert.equal(
        profile,
        undefined,
        `bob's job starts from nothing, not from alice's profile ${JSON.stringify(profile?.points)}`,
      );
      const mine = await api.call('GET', '/v1/profiles', 'gpu_alice');
      assert.deepEqual(
        mine.json.map((p: { key: string; scope: string; measured_replicas: number[] }) => [
          p.key,
          p.scope,
          p.measured_replicas,
        ]),
        [['resnet', 'alice', [2]]],
      );
      assert.deepEqual(
        (await api.call('GET', '/v1/profiles', 'gpu_bob')).json,
        [],
        'bob sees none: his jobs measured nothing',
      );
      assert.equal((await api.call('GET', '/v1/profiles/resnet', 'gpu_bob')).status, 404);
      assert.equal((await api.call('GET', '/v1/profiles/resnet', 'gpu_alice')).json[0].scope, 'alice');
      assert.deepEqual(
        (await api.call('GET', '/v1/profiles', api.admin)).json.map((p: { key: string; scope: string }) => [
          p.key,
          p.scope,
        ]),
        [['resnet', 'alice']],
      );
      // Her own profile holds only her jobs' measurements: she may remove it.
      assert.equal((await api.call('DELETE', '/v1/profiles/resnet', 'gpu_bob')).status, 404);
      assert.equal((await api.call('DELETE', '/v1/profiles/resnet', 'gpu_alice')).status, 200);
      assert.deepEqual(await api.store.listKeyProfiles(), []);
    } finally {
      await api.close();
    }
  });

  it("shared by the admin's choice (--shared-profiles): bob's `resnet.py` starts from the profile of `resnet`", async () => {
    const { api, profile } = await aliceThenBob(true);
    try {
      assert.ok(profile, "bob's job starts from the shared profile");
      assert.deepEqual(
        profile.points.map((p) => p.num_replicas),
        [2],
      );
      assert.deepEqual(
        (await api.call('GET', '/v1/profiles', 'gpu_bob')).json.map((p: { key: string; scope: string | null }) => [
          p.key,
          p.scope,
        ]),
        [['resnet', null]],
      );
    } finally {
      await api.close();
    }
  });
});
