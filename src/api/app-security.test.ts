/**
 * The API's security, in process: the token lifecycle, and validation before anything is
 * stored (a 403 named the owner; /v1/nodes showed other users' job ids), each tried as an
 * attacker would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jobToken } from '../control/tokens.js';
import { inProcessApi } from './testing/in-process.js';
import { measuredStepFixture } from '../goodput/testing/perf-fixture.js';

let now = 1_000_000;
const api = await inProcessApi({ now_ms: () => now });
const { call, admin, dir } = api;
after(() => api.close());

const measurement = measuredStepFixture({ time_s: 1, step: 1 });

describe('late validation: refused at submit with the field named', () => {
  let alice = '';
  before(async () => {
    alice = (await call('POST', '/v1/tokens', admin, { user: 'alice' })).json.token;
  });

  for (const [what, spec, field] of [
    ['a NUL byte in an env value', { env: { HF_TOKEN: 'a\u0000b' } }, 'env.HF_TOKEN'],
    ['a NUL byte in an argument', { command: ['echo', 'a\u0000b'] }, 'command.1'],
    ['a 200 KB argument', { command: ['echo', 'x'.repeat(200_000)] }, 'command.1'],
    ['a 100 KB env value', { env: { BIG: 'x'.repeat(100_000) } }, 'env.BIG'],
    ['300 variables', { env: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`V${i}`, 'x'])) }, 'env'],
    [
      'arguments over 512 KiB together',
      { command: ['echo', ...Array.from({ length: 12 }, () => 'y'.repeat(60_000))] },
      'command',
    ],
  ] as const) {
    it(`refuses ${what}`, async () => {
      const r = await call('POST', '/v1/jobs', alice, { name: 'bad', command: ['true'], workdir: dir, ...spec });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.error.code, 'E_SPEC');
      assert.ok(r.json.error.message.includes(`${field}:`), r.json.error.message);
    });
  }

  it('refuses a report whose breakdown has too many or too long keys', async () => {
    const job = (await call('POST', '/v1/jobs', alice, { name: 'ok', command: ['true'], workdir: dir })).json
      .id as string;
    const token = jobToken(api.secret, job);
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 1]));
    for (const breakdown of [many, { ['k'.repeat(65)]: 1 }]) {
      const r = await call('POST', `/v1/jobs/${job}/reports`, token, {
        attempt: 0,
        reports: [{ ...measurement, breakdown }],
      });
      assert.equal(r.status, 400);
      assert.match(r.json.error.message, /breakdown/);
    }
  });
});

describe('other users stay anonymous', () => {
  it("another user's job is not found (404, as a job that does not exist), and /v1/nodes hides other users' job ids", async () => {
    const bob = (await call('POST', '/v1/tokens', admin, { user: 'bob' })).json.token as string;
    const carol = (await call('POST', '/v1/tokens', admin, { user: 'carol' })).json.token as string;
    const job = (await call('POST', '/v1/jobs', bob, { name: 'secret-project', command: ['true'], workdir: dir })).json
      .id as string;
    const r = await call('GET', `/v1/jobs/${job}`, carol);
    assert.equal(r.status, 404);
    assert.deepEqual(
      r.json.error,
      { code: 'E_NOT_FOUND', message: `no job '${job}'` },
      'the answer for a job that does not exist',
    );
    await api.store.assignJob(job, { allocation: [0], devices: [1] }, 0, 'scheduler', 'test');
    const seen = (who: string) =>
      call('GET', '/v1/nodes', who).then((n) => n.json[0].devices[1] as { job: string | null; busy: boolean });
    assert.deepEqual(await seen(carol), {
      index: 1,
      kind: 'cpu',
      name: 'cpu-slot-1',
      type: 'cpu',
      job: null,
      busy: true,
    });
    assert.equal((await seen(bob)).job, job);
    assert.equal((await seen(admin)).job, job);
  });
});

describe('token lifecycle', () => {
  it('expires tokens; a user makes and revokes their own only; a revoked token is refused', async () => {
    const dave = await call('POST', '/v1/tokens', admin, { user: 'dave', expires_in_s: 60 });
    assert.equal(dave.status, 201);
    const token = dave.json.token as string;
    assert.equal((await call('GET', '/v1/jobs', token)).status, 200);
    // dave's own second token never outlives the first.
    const second = await call('POST', '/v1/tokens', token, { expires_in_s: 3600 });
    assert.equal(second.status, 201);
    assert.equal(second.json.expires_at, dave.json.expires_at);
    assert.equal((await call('POST', '/v1/tokens', token, { user: 'eve' })).status, 403);
    assert.equal((await call('POST', '/v1/tokens', token, { unix_user: 'root' })).status, 403);
    const mine = (await call('GET', '/v1/tokens', token)).json as { id: string; user: string }[];
    assert.deepEqual(
      mine.map((t) => t.user),
      ['dave', 'dave'],
    );
    assert.ok(!JSON.stringify(mine).includes(token), 'listing never shows a token');
    const others = (await call('GET', '/v1/tokens', admin)).json.filter((t: { user: string }) => t.user !== 'dave')[0];
    assert.equal(
      (await call('DELETE', `/v1/tokens/${others.id}`, token)).status,
      404,
      "another user's token is unknown to dave",
    );
    assert.equal((await call('DELETE', `/v1/tokens/${second.json.id}`, token)).status, 200);
    const refused = await call('GET', '/v1/jobs', second.json.token);
    assert.equal(refused.status, 401);
    assert.match(refused.json.error.message, /revoked/);
    now += 61_000;
    const expired = await call('GET', '/v1/jobs', token);
    assert.equal(expired.status, 401);
    assert.match(expired.json.error.message, /expired/);
  });

  it('refuses a job token once its job has ended', async () => {
    const erin = (await call('POST', '/v1/tokens', admin, { user: 'erin' })).json.token as string;
    const job = (await call('POST', '/v1/jobs', erin, { name: 'short', command: ['true'], workdir: dir })).json
      .id as string;
    const token = jobToken(api.secret, job);
    const body = { attempt: 0, reports: [measurement] };
    assert.equal((await call('POST', `/v1/jobs/${job}/reports`, token, body)).status, 200);
    assert.equal((await call('POST', `/v1/jobs/${job}/cancel`, erin)).status, 200);
    const r = await call('POST', `/v1/jobs/${job}/reports`, token, body);
    assert.equal(r.status, 409, 'a late report learns that its job ended, nothing stored');
    assert.match(r.json.error.message, /cancelled; its reports are no longer accepted/);
    const other = await call('GET', `/v1/jobs/${job}`, token);
    assert.equal(other.status, 401, 'the token opens nothing else');
    assert.match(other.json.error.message, /ended/);
  });
});
