/**
 * The cluster page's cost follows the active and recent jobs, not the store's history: with
 * hundreds of jobs that ended days ago, `/dash/cluster` reads only the jobs it draws (those
 * holding devices and those that ran in its window), and still draws them.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { NodeView } from '../api/views.js';
import { hashToken } from '../control/tokens.js';
import { jobSpecFixture, replicaFixture } from '../store/job-fixture.js';
import type { Store } from '../store/store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { dashboardApp } from './server.js';
import type { ClusterResponse } from './types.js';

const spec = jobSpecFixture({ name: 'x' });
const DAY_MS = 86_400_000;
let clock = Date.now() - 3 * DAY_MS;
const inner = new SqliteStore(':memory:', { now_ms: () => clock });
after(() => inner.close());

/** Counts the job records the routes read through the store. */
let recordsRead = 0;
const store = new Proxy(inner, {
  get(target, key, receiver) {
    const value = Reflect.get(target, key, receiver) as unknown;
    if (key === 'listJobs')
      return async (...a: Parameters<Store['listJobs']>) => {
        const jobs = await target.listJobs(...a);
        recordsRead += jobs.length;
        return jobs;
      };
    if (key === 'listJobsPage')
      return async (...a: Parameters<Store['listJobsPage']>) => {
        const page = await target.listJobsPage(...a);
        recordsRead += page.jobs.length;
        return page;
      };
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  },
}) as Store;

describe('dashboard /dash/cluster on a store with history', () => {
  it('reads the jobs it draws, not the ended ones before its window', async () => {
    await inner.putToken({ hash: hashToken('tok-root'), user: 'root', admin: true, created_at_ms: 0 });
    const launch = async (id: string, device: number) => {
      await inner.createJob({ id, name: id, user: 'alice', spec }, 'alice');
      await inner.assignJob(id, { allocation: [0], devices: [device] }, 0, 's', 't');
      await inner.launchJob(id, [replicaFixture(clock, { device })], 'b', 't');
    };
    for (let i = 0; i < 300; i++) {
      await launch(`old${i}`, 0);
      clock += 60_000;
      await inner.finishJob(`old${i}`, 'succeeded', 'b', 'done');
    }
    clock = Date.now() - 3_600_000;
    await launch('recent', 1);
    clock += 600_000;
    await inner.finishJob('recent', 'succeeded', 'b', 'done');
    await launch('live', 0);
    for (let i = 0; i < 5; i++) await inner.createJob({ id: `q${i}`, name: 'q', user: 'alice', spec }, 'alice');
    clock = Date.now();
    const nodes: NodeView[] = [
      {
        name: 'local',
        usable: 2,
        note: '',
        gpu_types: ['GPU'],
        devices: [0, 1].map((index) => ({
          index,
          kind: 'gpu' as const,
          name: 'GPU',
          type: 'GPU',
          job: index === 0 ? 'live' : null,
          busy: index === 0,
        })),
      },
    ];
    const app = dashboardApp({ live: { api_url: 'http://127.0.0.1:9', store, secret: 's', nodes: async () => nodes } });
    recordsRead = 0;
    const res = await app.request('/dash/cluster?hours=3', { headers: { authorization: 'Bearer tok-root' } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as ClusterResponse;
    assert.deepEqual(
      [...body.timeline.labels].sort(),
      ['live', 'recent'],
      'both jobs that ran in the window are drawn',
    );
    assert.equal(body.holders.live?.state, 'running');
    assert.ok(recordsRead <= 2, `read ${recordsRead} job records for a page that draws 2 (the store holds 307)`);
  });
});
