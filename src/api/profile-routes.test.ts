import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken, jobToken } from '../control/tokens.js';
import { inProcessApi } from './testing/in-process.js';
import { limitsFixture } from '../goodput/testing/perf-fixture.js';

// goodput: the control plane keeps profiles only for a policy that uses them.
const api = await inProcessApi({ policy: 'goodput' });
after(() => api.close());
const { call, admin, store, secret } = api;

const limits = limitsFixture();
const measurement = (step: number, replicas: number, step_time_s: number) => ({
  time_s: 1e9 + step,
  step,
  num_nodes: 1,
  num_replicas: replicas,
  local_bsz: 64,
  accum_steps: 0,
  step_time_s,
  sync_time_s: 0.01,
  grad_sqr: 1,
  grad_var: 20,
  samples: step * 64,
  remaining_samples: 6400 - step * 64,
});

describe('profiles in the API', () => {
  before(async () => {
    await store.putToken({ hash: hashToken('gpu_alice'), user: 'alice', admin: false, created_at_ms: 0 });
    await store.putToken({ hash: hashToken('gpu_bob'), user: 'bob', admin: false, created_at_ms: 0 });
  });

  it("shows a job's profile key (the spec's, or the default of its command) in its views", async () => {
    const a = await call('POST', '/v1/jobs', 'gpu_alice', {
      name: 'a',
      command: ['python3', 'resnet.py', '--seed', '1'],
      check_script: false,
    });
    assert.equal(a.status, 201);
    assert.deepEqual([a.json.profile_key, a.json.spec.profile, a.json.profile_use], ['resnet', 'resnet', null]);
    const b = await call('POST', '/v1/jobs', 'gpu_bob', {
      name: 'b',
      command: ['python3', 'resnet.py'],
      profile: 'bert-large',
      check_script: false,
    });
    assert.equal((await call('GET', `/v1/jobs/${b.json.id}`, 'gpu_bob')).json.profile_key, 'bert-large');
    const bad = await call('POST', '/v1/jobs', 'gpu_bob', { name: 'c', command: ['x'], profile: '../etc' });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /profile: letters, digits/);
  });

  it("lists and shows the profiles of the caller's keys (admin: all); others read as not found", async () => {
    const job = (await store.listJobs({ user: 'alice' }))[0]!;
    const token = jobToken(secret, job.id);
    const reported = await call('POST', `/v1/jobs/${job.id}/reports`, token, {
      attempt: 0,
      limits,
      reports: [measurement(1, 1, 0.1), measurement(2, 1, 0.1)],
    });
    assert.equal(reported.status, 200);
    const mine = await call('GET', '/v1/profiles', 'gpu_alice');
    assert.equal(mine.status, 200);
    assert.equal(mine.json.length, 1);
    const summary = mine.json[0];
    assert.deepEqual(
      [summary.key, summary.gpu_type, summary.jobs, summary.measured_replicas],
      ['resnet', 'cpu', 1, [1]],
    );
    assert.equal(summary.throughput.length, 1);
    assert.ok(summary.throughput[0].samples_per_s > 100, JSON.stringify(summary));
    assert.deepEqual((await call('GET', '/v1/profiles', 'gpu_bob')).json, [], 'bob has no job of key resnet');
    assert.equal((await call('GET', '/v1/profiles', admin)).json.length, 1);
    const full = await call('GET', '/v1/profiles/resnet', 'gpu_alice');
    assert.equal(full.status, 200);
    assert.deepEqual(
      full.json[0].points.map((p: { num_replicas: number }) => p.num_replicas),
      [1],
    );
    assert.ok(full.json[0].perf.alpha_c >= 0);
    assert.deepEqual(full.json[0].grad, [{ progress: 0.02, sqr: 1, var: 20 }]);
    assert.deepEqual(full.json[0].limits, limits);
    assert.equal('job_ids' in full.json[0], false, "no job ids: they may be other users'");
    const hidden = await call('GET', '/v1/profiles/resnet', 'gpu_bob');
    assert.deepEqual([hidden.status, hidden.json.error.code], [404, 'E_NOT_FOUND']);
    assert.match(hidden.json.error.message, /goodput profiles ls/);
    assert.equal(
      (await call('GET', '/v1/profiles/bert-large', 'gpu_bob')).status,
      404,
      'a key without reports has no profile',
    );
    const wrong = await call('GET', '/v1/profiles/a%20b', 'gpu_alice');
    assert.deepEqual([wrong.status, wrong.json.error.code], [400, 'E_BAD_REQUEST']);
    assert.equal((await call('GET', '/v1/profiles', token)).status, 403, 'a job token reads no profile');
    assert.equal((await call('GET', '/v1/profiles')).status, 401);
    const doc = await call('GET', '/v1/openapi.json');
    assert.ok(doc.json.paths['/v1/profiles/{key}'].get);
    assert.match(doc.json.components.schemas.JobSpec.properties.profile.description, /Profile key/);
    assert.ok(doc.json.paths['/v1/profiles/{key}'].delete);
  });

  it('removes a profile: the owner of all its jobs or an admin; others read it as not found or are refused', async () => {
    // Measurements of several users' jobs meet in one profile only when the server shares them.
    const shared = await inProcessApi({ policy: 'goodput', shared_profiles: true });
    try {
      await shared.store.putToken({ hash: hashToken('gpu_alice'), user: 'alice', admin: false, created_at_ms: 0 });
      await shared.store.putToken({ hash: hashToken('gpu_bob'), user: 'bob', admin: false, created_at_ms: 0 });
      await removal(shared);
    } finally {
      await shared.close();
    }
  });
});

/** Removal rules, on a server with shared profiles (`api`). */
async function removal(api: Awaited<ReturnType<typeof inProcessApi>>): Promise<void> {
  const { call, admin, store, secret } = api;
  const report = async (user: string, name: string, profile?: string) => {
    const created = await call('POST', '/v1/jobs', `gpu_${user}`, {
      name,
      command: ['python3', 'resnet.py'],
      check_script: false,
      ...(profile ? { profile } : {}),
    });
    const r = await call('POST', `/v1/jobs/${created.json.id}/reports`, jobToken(secret, created.json.id), {
      attempt: 0,
      limits,
      reports: [measurement(1, 1, 0.1), measurement(2, 1, 0.1)],
    });
    assert.equal(r.status, 200);
  };
  await report('alice', 'alice-train');
  assert.equal((await call('DELETE', '/v1/profiles/resnet', 'gpu_bob')).status, 404, 'bob has no job of key resnet');
  const noType = await call('DELETE', '/v1/profiles/resnet?gpu_type=H100', 'gpu_alice');
  assert.deepEqual([noType.status, noType.json.error.code], [404, 'E_NOT_FOUND']);
  assert.match(noType.json.error.message, /has no GPU type 'H100'/);

  await report('bob', 'bob-train');
  const shared = await call('DELETE', '/v1/profiles/resnet', 'gpu_alice');
  assert.deepEqual([shared.status, shared.json.error.code], [403, 'E_FORBIDDEN']);
  assert.match(shared.json.error.message, /other users' jobs; ask an admin/);
  assert.equal((await call('GET', '/v1/profiles/resnet', 'gpu_alice')).json[0].jobs, 2, 'refused: nothing removed');
  const removed = await call('DELETE', '/v1/profiles/resnet', admin);
  assert.equal(removed.status, 200);
  assert.deepEqual(
    removed.json.map((p: { key: string; gpu_type: string; jobs: number }) => [p.key, p.gpu_type, p.jobs]),
    [['resnet', 'cpu', 2]],
  );
  assert.equal((await call('GET', '/v1/profiles/resnet', admin)).status, 404);

  await report('alice', 'solo-1', 'solo');
  const own = await call('DELETE', '/v1/profiles/solo?gpu_type=cpu', 'gpu_alice');
  assert.deepEqual([own.status, own.json.length], [200, 1], 'only her own jobs measured it');
  assert.deepEqual(await store.listKeyProfiles('solo'), []);
  const job = (await store.listJobs({ user: 'alice' }))[0]!;
  assert.equal(
    (await call('DELETE', '/v1/profiles/solo', jobToken(secret, job.id))).status,
    403,
    'a job token removes nothing',
  );
}
