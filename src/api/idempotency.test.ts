import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { jobSpecFixture } from '../store/job-fixture.js';
import { inProcessApi } from './testing/in-process.js';

const api = await inProcessApi();
after(() => api.close());

const submit = async (key: string | undefined, name = 'retry') => {
  const res = await api.app.request('/v1/jobs', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${api.admin}`,
      'content-type': 'application/json',
      ...(key !== undefined ? { 'idempotency-key': key } : {}),
    },
    body: JSON.stringify({ name, command: ['true'], workdir: api.dir }),
  });
  return { status: res.status, body: (await res.json()) as { id: string; error?: { message: string } } };
};

describe('submit idempotency key', () => {
  it('a retried submit with the same key returns the first job and creates no second one', async () => {
    const first = await submit('k-1');
    const again = await submit('k-1');
    assert.equal(first.status, 201);
    assert.equal(again.status, 200);
    assert.equal(again.body.id, first.body.id);
    assert.equal((await api.store.listJobs({ user: 'admin' })).filter((j) => j.name === 'retry').length, 1);
    assert.notEqual((await submit('k-2')).body.id, first.body.id, 'another key: another job');
    assert.equal((await submit(undefined)).status, 201);
    assert.equal((await submit('bad key!')).status, 400);
  });

  it('is atomic in the store: two creations with one key make one job', async () => {
    const spec = jobSpecFixture({ name: 's' });
    const a = await api.store.createJob({ id: 'ida', name: 's', user: 'zed', spec, idempotency_key: 'same' }, 'zed');
    const b = await api.store.createJob({ id: 'idb', name: 's', user: 'zed', spec, idempotency_key: 'same' }, 'zed');
    assert.equal(b.id, a.id);
    assert.equal(await api.store.getJob('idb'), undefined);
    assert.equal(
      (await api.store.createJob({ id: 'idc', name: 's', user: 'amy', spec, idempotency_key: 'same' }, 'amy')).id,
      'idc',
      'keys are per user',
    );
  });
});
