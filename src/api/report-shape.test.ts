import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { jobToken } from '../control/tokens.js';
import { inProcessApi } from './testing/in-process.js';
import { replicaFixture } from '../store/job-fixture.js';

const api = await inProcessApi({ policy: 'goodput' });
after(() => api.close());

const m = (replicas: number, nodes: number) => ({
  time_s: 1.7e9,
  step: 1,
  epoch: 0,
  num_nodes: nodes,
  num_replicas: replicas,
  local_bsz: 32,
  accum_steps: 0,
  step_time_s: 0.1,
  sync_time_s: 0,
  grad_sqr: 1,
  grad_var: 2,
  samples: 32,
});

describe('reports are vouched for by where the attempt runs', () => {
  it('refuses measurements of another shape than the launched attempt (400 naming the field); nothing reaches the profiles', async () => {
    const job = (
      await api.call('POST', '/v1/jobs', api.admin, {
        name: 'train',
        command: ['python3', 'train.py'],
        workdir: api.dir,
        max_replicas: 4,
        check_script: false,
      })
    ).json;
    await api.store.assignJob(job.id, { allocation: [0], devices: [0] }, 0, 'test', 'one slot');
    await api.store.launchJob(job.id, [replicaFixture(0, { log_path: '/dev/null' })], 'test', 'launched');
    const token = jobToken(api.secret, job.id);
    const lie = await api.call('POST', `/v1/jobs/${job.id}/reports`, token, {
      attempt: 0,
      reports: [m(2, 1), m(2, 2)],
    });
    assert.equal(lie.status, 400);
    assert.match(lie.json.error.message, /reports\.0\.num_replicas: 2, but attempt 0 runs 1 replica/);
    assert.match(lie.json.error.message, /reports\.1\.num_nodes: 2, but attempt 0 runs on 1 node/);
    assert.equal((await api.store.listReports(job.id)).length, 0);
    assert.deepEqual(await api.store.getProfile(job.id), []);
    assert.deepEqual(await api.store.listKeyProfiles(), []);
    const honest = await api.call('POST', `/v1/jobs/${job.id}/reports`, token, { attempt: 0, reports: [m(1, 1)] });
    assert.equal(honest.status, 200, honest.text);
    assert.deepEqual(
      (await api.store.getProfile(job.id)).map((p) => p.num_replicas),
      [1],
    );
  });
});
