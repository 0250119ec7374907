import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { jobToken } from '../control/tokens.js';
import { inProcessApi } from './testing/in-process.js';
import { measuredStepFixture } from '../goodput/testing/perf-fixture.js';

const api = await inProcessApi();
after(() => api.close());

const measurement = (extra: Record<string, unknown>) =>
  measuredStepFixture({ time_s: 1.7e9, step: 1, epoch: 0, grad_sqr: 1, grad_var: 2, samples: 32, loss: 1, ...extra });

describe('reports with non-finite or absurd values; views of bad stored data', () => {
  it('refuses absurd values at the boundary (400 naming the field) and stores nothing', async () => {
    const job = (
      await api.call('POST', '/v1/jobs', api.admin, { name: 'b', command: ['true'], workdir: api.dir, max_replicas: 2 })
    ).json;
    const token = jobToken(api.secret, job.id);
    for (const [field, value] of [
      ['checkpoint_time_s', 1e308],
      ['time_s', 1e300],
      ['grad_sqr', 1e308],
      ['grad_var', -1e308],
      ['loss', 1e300],
      ['checkpoint_time_s', 1.7e12],
    ] as const) {
      const r = await api.call('POST', `/v1/jobs/${job.id}/reports`, token, {
        attempt: 0,
        reports: [measurement({ [field]: value })],
      });
      assert.equal(r.status, 400, `${field} ${value}`);
      assert.match(r.json.error.message, new RegExp(field), `${field}: ${r.json.error.message}`);
    }
    assert.equal((await api.store.listReports(job.id)).length, 0);
    const ok = await api.call('POST', `/v1/jobs/${job.id}/reports`, token, {
      attempt: 0,
      reports: [measurement({ checkpoint_time_s: 1.7e9 })],
    });
    assert.equal(ok.status, 200);
    const view = await api.call('GET', `/v1/jobs/${job.id}`, api.admin);
    assert.equal(view.json.checkpoint_at, new Date(1.7e12).toISOString());
  });

  it('shows a time the store holds but no date can represent as unknown instead of failing', async () => {
    const job = (await api.call('POST', '/v1/jobs', api.admin, { name: 'c', command: ['true'], workdir: api.dir }))
      .json;
    const db = new Database(join(api.dir, 'db.sqlite'));
    db.prepare('UPDATE jobs SET checkpoint_at_ms = ?, started_at_ms = ?, finished_at_ms = ? WHERE id = ?').run(
      Infinity,
      1e300,
      -Infinity,
      job.id,
    );
    db.prepare('UPDATE events SET at_ms = ? WHERE job_id = ?').run(Infinity, job.id);
    db.close();
    const view = await api.call('GET', `/v1/jobs/${job.id}`, api.admin);
    assert.equal(view.status, 200, view.text);
    assert.equal(view.json.checkpoint_at, null);
    assert.equal(view.json.started_at, null);
    assert.equal((await api.call('GET', '/v1/jobs', api.admin)).status, 200);
    assert.equal((await api.call('GET', `/v1/jobs/${job.id}/events`, api.admin)).status, 200);
  });
});

describe('an env variable named __proto__', () => {
  it('is refused with a message naming it, not dropped silently', async () => {
    const r = await api.call(
      'POST',
      '/v1/jobs',
      api.admin,
      '{"name":"p","command":["true"],"workdir":"/tmp","env":{"__proto__":"x","A":"1"}}',
    );
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.error.message, /env\.__proto__/);
  });
});
