import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { hashToken } from '../control/tokens.js';
import { jobSpecFixture } from '../store/job-fixture.js';
import type { JobSpec } from '../store/types.js';
import { inProcessApi } from './testing/in-process.js';

let clock = Date.parse('2026-01-01T00:00:00Z');
const api = await inProcessApi({ now_ms: () => clock });
after(() => api.close());

const spec = (name: string): JobSpec => jobSpecFixture({ name });
const ids = (r: { json: Record<string, unknown> }) => (r.json as unknown as { id: string }[]).map((j) => j.id);

describe('GET /v1/jobs: paged and filtered', () => {
  before(async () => {
    await api.store.putToken({ hash: hashToken('tok-alice'), user: 'alice', admin: false, created_at_ms: 0 });
    // 250 jobs, two per millisecond (ties broken by insertion), alternating users and names.
    for (let i = 0; i < 250; i++) {
      if (i % 2 === 0) clock += 1;
      await api.store.createJob(
        {
          id: `j${String(i).padStart(3, '0')}`,
          name: i % 3 === 0 ? 'train' : 'eval',
          user: i % 2 === 0 ? 'alice' : 'bob',
          spec: spec('x'),
        },
        'test',
      );
      if (i % 5 === 0) await api.store.finishJob(`j${String(i).padStart(3, '0')}`, 'cancelled', 'test', 'test');
    }
  });

  it('pages newest first with a cursor, each job once, default 100 per page', async () => {
    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const r = await api.call('GET', `/v1/jobs${cursor ? `?cursor=${cursor}` : ''}`, api.admin);
      assert.equal(r.status, 200);
      assert.ok(ids(r).length <= 100);
      seen.push(...ids(r));
      cursor = r.headers.get('x-next-cursor');
      pages++;
    }
    assert.equal(pages, 3);
    assert.equal(seen.length, 250);
    assert.equal(new Set(seen).size, 250);
    assert.deepEqual(seen, [...seen].sort().reverse(), 'newest first');
    const asc = await api.call('GET', '/v1/jobs?order=asc&limit=3', api.admin);
    assert.deepEqual(ids(asc), ['j000', 'j001', 'j002']);
  });

  it('filters by state, user, name and since, and a user lists only their own jobs', async () => {
    const cancelled = await api.call('GET', '/v1/jobs?state=cancelled&limit=1000', api.admin);
    assert.equal(ids(cancelled).length, 50);
    const active = await api.call('GET', '/v1/jobs?state=active&user=bob&name=train&limit=1000', api.admin);
    assert.ok(ids(active).length > 0);
    for (const j of active.json as unknown as { user: string; name: string; state: string }[])
      assert.deepEqual([j.user, j.name, j.state], ['bob', 'train', 'queued']);
    const since = await api.call('GET', `/v1/jobs?since=${new Date(clock - 1).toISOString()}`, api.admin);
    assert.deepEqual(ids(since), ['j249', 'j248', 'j247', 'j246']);
    assert.equal(ids(await api.call('GET', '/v1/jobs?since=1h&limit=1000', api.admin)).length, 250);
    const mine = await api.call('GET', '/v1/jobs?limit=1000', 'tok-alice');
    assert.equal(ids(mine).length, 125);
    assert.equal((await api.call('GET', '/v1/jobs?user=bob', 'tok-alice')).status, 403);
  });

  it('answers 400 naming the parameter for a bad limit, state, since or cursor', async () => {
    for (const [q, word] of [
      ['limit=0', 'limit'],
      ['limit=5000', 'limit'],
      ['state=done', 'state'],
      ['since=yesterday', 'since'],
      ['cursor=zzz', 'cursor'],
      ['order=up', 'order'],
    ]) {
      const r = await api.call('GET', `/v1/jobs?${q}`, api.admin);
      assert.equal(r.status, 400, q);
      assert.match(r.json.error.message, new RegExp(word!), q);
    }
  });

  it('walks an index for every filter (no scan of all jobs, no sort)', () => {
    const db = new Database(join(api.dir, 'db.sqlite'), { readonly: true });
    try {
      for (const where of ['', 'WHERE user = ?', 'WHERE state = ?', 'WHERE name = ?']) {
        const args = where ? ['x'] : [];
        const plan = (
          db
            .prepare(
              `EXPLAIN QUERY PLAN SELECT * FROM jobs ${where} ORDER BY submitted_at_ms DESC, rowid DESC LIMIT 101`,
            )
            .all(...args) as { detail: string }[]
        )
          .map((r) => r.detail)
          .join('; ');
        assert.doesNotMatch(plan, /TEMP B-TREE|SCAN jobs$/, `${where || 'no filter'}: ${plan}`);
      }
    } finally {
      db.close();
    }
  });
});
