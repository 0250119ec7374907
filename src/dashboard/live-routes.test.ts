/**
 * The dashboard's /dash endpoints in-process on a real SQLite store: the API's tokens and its
 * rule (users see their own jobs, admins all), the jobs table's goodput columns and the cluster
 * view with another user's devices unnamed.
 */
import { reportBatch } from '../store/report-batch.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NodeView } from '../api/views.js';
import { hashToken, jobToken } from '../control/tokens.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { JobRecord, JobSpec } from '../store/types.js';
import { dashboardApp } from './server.js';
import type { ClusterResponse, JobSeries, JobsResponse } from './types.js';
import { jobSpecFixture, storedProfileFixture } from '../store/job-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-dash-routes-'));
const store = new SqliteStore(join(dir, 'db.sqlite'));
const secret = 'test-secret';
const spec: JobSpec = jobSpecFixture({ name: 'x', workdir: dir, max_replicas: 4, max_restarts: 1 });
const nodes: NodeView[] = [
  {
    name: 'local',
    usable: 3,
    note: '',
    gpu_types: ['GPU'],
    devices: [0, 1, 2].map((index) => ({
      index,
      kind: 'gpu' as const,
      name: 'GPU',
      type: 'GPU',
      job: index === 0 ? 'a1' : index === 1 ? 'b1' : null,
      busy: index < 2,
    })),
  },
];
const rejection = (id: string) =>
  id === 'q1' ? { code: 'E_NO_CAPACITY', message: 'goodput: no free GPU for its min_replicas' } : undefined;
// Carol's job c1 starts from its key's profile (Controller.profilesFor), as the scheduler sees it.
const perf = { alpha_c: 0.02, beta_c: 0.001, alpha_n: 0.2, beta_n: 0.01, alpha_r: 0.05, beta_r: 0.005, gamma: 1.5 };
const profile = storedProfileFixture('x', 'GPU', [], perf, { grad: [{ progress: 0, sqr: 1, var: 1 }] });
const profiles = async (jobs: readonly JobRecord[]) =>
  new Map(jobs.filter((j) => j.id === 'c1').map((j) => [j.id, profile]));
const app = dashboardApp({
  live: { api_url: 'http://127.0.0.1:9', store, secret, nodes: async () => nodes, rejection, profiles },
});
const get = (path: string, token?: string) =>
  app.request(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });

before(async () => {
  for (const user of ['alice', 'bob', 'carol', 'root'])
    await store.putToken({ hash: hashToken(`tok-${user}`), user, admin: user === 'root', created_at_ms: 0 });
  for (const [id, user, device] of [
    ['a1', 'alice', 0],
    ['b1', 'bob', 1],
  ] as const) {
    await store.createJob({ id, name: `${user}-job`, user, spec }, user);
    await store.assignJob(id, { allocation: [0], devices: [device] }, 0, 'scheduler', 'test');
    await store.launchJob(
      id,
      [
        {
          rank: 0,
          device,
          node: 'local',
          launch_id: '',
          pid: 1,
          proc_start: '',
          log_path: '',
          started_at_ms: Date.now() - 1000,
        },
      ],
      'backend',
      'test',
    );
  }
  await store.createJob({ id: 'q1', name: 'alice-waits', user: 'alice', spec }, 'alice');
  const limits = {
    init_batch_size: 64,
    max_batch_size: 1024,
    min_local_bsz: 16,
    max_local_bsz: 256,
    accumulation: true,
  };
  await store.addReports(
    reportBatch('a1', 0, limits, [
      {
        time_s: Date.now() / 1000,
        step: 10,
        num_nodes: 1,
        num_replicas: 1,
        local_bsz: 64,
        accum_steps: 1,
        step_time_s: 0.5,
        sync_time_s: 0,
        grad_sqr: 1,
        grad_var: 1,
        samples: 1280,
        remaining_samples: 3840,
      },
    ]),
  );
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('dashboard /dash endpoints', () => {
  it('needs a user token, as the API does', async () => {
    assert.equal((await get('/dash/jobs')).status, 401);
    assert.equal((await get('/dash/jobs', 'tok-nobody')).status, 401);
    assert.equal((await get('/dash/jobs', jobToken(secret, 'a1'))).status, 403);
    assert.deepEqual(await (await get('/dash/me', 'tok-alice')).json(), { user: 'alice', admin: false });
  });

  it("lists a user's own jobs with batch, goodput and progress; an admin sees all", async () => {
    const mine = (await (await get('/dash/jobs', 'tok-alice')).json()) as JobsResponse;
    mine.rows.reverse(); // newest first
    assert.deepEqual(
      mine.rows.map((r) => r.id),
      ['a1', 'q1'],
    );
    assert.equal(
      mine.rows[1]!.reason,
      'goodput: no free GPU for its min_replicas',
      "a waiting job shows the policy's reason",
    );
    const a = mine.rows[0]!;
    // batch 64 x (1 + 1) x 1 = 128 in 0.5 s: 256 samples/s; efficiency at twice B0 with sqr = var: 2/1.5/2.
    assert.equal(a.batch_size, 128);
    assert.equal(a.throughput, 256);
    assert.ok(Math.abs(a.goodput! - 256 * (2 / 1.5 / 2)) < 1e-9);
    assert.equal(a.progress, 0.25);
    assert.ok(a.eta_ms! > mine.now_ms);
    const all = (await (await get('/dash/jobs', 'tok-root')).json()) as JobsResponse;
    assert.deepEqual(all.rows.map((r) => r.id).sort(), ['a1', 'b1', 'q1']);
  });

  it("refuses another user's series and serves the owner's", async () => {
    assert.equal((await get('/dash/jobs/b1/series', 'tok-alice')).status, 404, "another user's job is not found");
    assert.equal((await get('/dash/jobs/zz/series', 'tok-alice')).status, 404);
    const s = (await (await get('/dash/jobs/a1/series', 'tok-alice')).json()) as JobSeries;
    assert.deepEqual(s.batch_size, [128]);
    assert.deepEqual(s.replicas, [1]);
  });

  it("shows another user's devices as taken but unnamed, in the grid and the timeline", async () => {
    const c = (await (await get('/dash/cluster', 'tok-alice')).json()) as ClusterResponse;
    assert.deepEqual(
      c.nodes[0]!.devices.map((d) => [d.use, d.job]),
      [
        ['job', 'a1'],
        ['other', null],
        ['free', null],
      ],
    );
    assert.deepEqual(Object.keys(c.holders), ['a1']);
    assert.deepEqual(c.timeline.labels.sort(), ['', 'alice-job']);
    assert.ok(!c.timeline.ids.includes('b1'));
    assert.equal(c.timeline.row.length, 2);
    assert.equal((await get('/dash/cluster?hours=-1', 'tok-alice')).status, 400);
  });

  it("computes a running job's speedup with the profile its model starts from", async () => {
    await store.createJob({ id: 'c1', name: 'carol-job', user: 'carol', spec }, 'carol');
    await store.assignJob('c1', { allocation: [0], devices: [2] }, 0, 'scheduler', 'test');
    await store.launchJob(
      'c1',
      [
        {
          rank: 0,
          device: 2,
          node: 'local',
          launch_id: '',
          pid: 1,
          proc_start: '',
          log_path: '',
          started_at_ms: Date.now(),
        },
      ],
      'backend',
      'test',
    );
    const [row] = ((await (await get('/dash/jobs', 'tok-carol')).json()) as JobsResponse).rows;
    assert.equal(row!.state, 'running');
    assert.equal(row!.speedup, 1, "no report of its own yet: the profile's model, on its one replica");
    const plain = (await (await get('/dash/jobs', 'tok-alice')).json()) as JobsResponse;
    assert.equal(plain.rows[0]!.speedup, null, 'a job with no model and no profile has none');
  });
});
