/**
 * One user's flood at the API, in-process: submits past the per-user limits are answered 429
 * E_JOB_LIMIT with the limit and what to do, and `POST /v1/jobs/cancel` cancels by filter in one
 * call (own jobs; another user's: admin).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../control/tokens.js';
import { inProcessApi } from './testing/in-process.js';

describe('a flood of submits at the API', () => {
  let api: Awaited<ReturnType<typeof inProcessApi>>;
  before(async () => {
    api = await inProcessApi({ user_limits: { max_active: 5, max_queued: 3 } });
    for (const user of ['alice', 'bob'])
      await api.store.putToken({ hash: hashToken(`tok-${user}`), user, admin: false, created_at_ms: 0 });
  });
  after(() => api.close());
  const submit = (token: string, name = 'j') =>
    api.call('POST', '/v1/jobs', token, { name, command: ['sleep', '600'], workdir: api.dir });

  it('answers 429 E_JOB_LIMIT past the per-user queued limit, saying the limit and what to do', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await submit('tok-alice')).status, 201);
    const refused = await submit('tok-alice');
    assert.equal(refused.status, 429);
    assert.equal(refused.json.error.code, 'E_JOB_LIMIT');
    assert.match(
      refused.json.error.message,
      /alice has 3 queued jobs.*--max-queued-jobs-per-user 3.*goodput cancel --user alice --state queued/,
    );
    assert.equal((await api.store.listJobs({ user: 'alice' })).length, 3, 'nothing stored');
    assert.equal((await submit('tok-bob')).status, 201, 'another user is not limited by alice');
  });

  it('cancels by filter in one call: own jobs, other users only as admin, at least one filter', async () => {
    assert.equal((await api.call('POST', '/v1/jobs/cancel', 'tok-alice', {})).status, 400);
    assert.equal(
      (await api.call('POST', '/v1/jobs/cancel', 'tok-alice', { user: 'bob', state: 'queued' })).status,
      403,
    );
    const mine = await api.call('POST', '/v1/jobs/cancel', 'tok-alice', { state: 'queued' });
    assert.equal(mine.status, 200);
    assert.equal(mine.json.cancelled, 3);
    assert.deepEqual(
      [...new Set(mine.json.jobs.map((j: { user: string; from: string }) => `${j.user}:${j.from}`))],
      ['alice:queued'],
    );
    assert.equal((await api.store.listJobs({ user: 'bob', states: ['queued'] })).length, 1, "bob's job untouched");
    const admin = await api.call('POST', '/v1/jobs/cancel', api.admin, { user: 'bob', state: 'active' });
    assert.deepEqual([admin.status, admin.json.cancelled], [200, 1]);
    assert.equal((await submit('tok-alice')).status, 201, 'room again once the queue was cleared');
    assert.equal((await api.call('POST', '/v1/jobs/cancel', api.admin, { state: 'bogus' })).status, 400);
  });
});
