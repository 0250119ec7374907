/**
 * The dashboard's plan endpoint in-process on a real SQLite store: it plans a key from the
 * profiles the control plane learned and `goodput profile` stored (memory included), with `goodput
 * plan`'s planner (the same report), and only from the profiles the caller may read.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../control/tokens.js';
import { MEASURED_PERF, PLAN_LIMITS, planPoints } from '../planner/testing/plan-fixture.js';
import { planReport, type PlanReport } from '../planner/plan-report.js';
import type { MemoryProfile } from '../planner/plan-types.js';
import { saveToDataDir } from '../datadir/profile-file.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { JobSpec } from '../store/types.js';
import { DEFAULT_GPU_TABLE, readGpuTable } from '../datadir/gpu-table.js';
import { dashboardApp } from './server.js';
import { jobSpecFixture } from '../store/job-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-dash-plan-'));
// The data directory's store, as `goodput up` and `goodput profile` share it.
const store = new SqliteStore(join(dir, 'goodput.sqlite'));
const secret = 'test-secret';
const live = { api_url: 'http://127.0.0.1:9', store, secret, nodes: async () => [] };
const app = dashboardApp({ live: { ...live, data_dir: dir } });
const withoutDataDir = dashboardApp({ live });
const get = (path: string, token: string, on = app) =>
  on.request(path, { headers: { authorization: `Bearer ${token}` } });
const memory: MemoryProfile = {
  source: 'allocator',
  base_bytes: 2e9,
  per_sample_bytes: 1e8,
  device_bytes: 40 * 2 ** 30,
  max_local_bsz_fit: 409,
  samples: [],
};
const limits = PLAN_LIMITS;
const perf = MEASURED_PERF;
const points = planPoints(perf, [1, 2, 4]);
const spec = (profile: string): JobSpec =>
  jobSpecFixture({ name: profile, profile, workdir: dir, max_replicas: 4, max_restarts: 1 });

before(async () => {
  for (const user of ['alice', 'bob', 'root'])
    await store.putToken({ hash: hashToken(`tok-${user}`), user, admin: user === 'root', created_at_ms: 0 });
  await store.createJob({ id: 'a1', name: 'resnet', user: 'alice', spec: spec('resnet') }, 'alice');
  // Stored as `goodput profile` stores it: the store, and the memory profile and notes beside it.
  await saveToDataDir(
    dir,
    'resnet',
    {
      gpu_type: 'A100-40GB',
      points,
      grad: [{ progress: 0, sqr: 1, var: 20 }],
      limits,
      model_parameters: 11_000_000,
      memory,
      notes: ['one node'],
    },
    'profile-run',
  );
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('dashboard /dash/plan', () => {
  it("plans a key from the store's profile with goodput plan's planner", async () => {
    const res = await get(
      '/dash/plan/resnet?gpus=1,2,4,8&target_samples=500000&gpu_type=A100-40GB,T4&budget=50',
      'tok-alice',
    );
    assert.equal(res.status, 200);
    const body = (await res.json()) as PlanReport;
    const stored = await store.getKeyProfile('resnet', 'A100-40GB');
    assert.ok(stored);
    const expected = planReport({
      key: 'resnet',
      others: [],
      table: readGpuTable(DEFAULT_GPU_TABLE()),
      table_source: 'data/gpus.json',
      types: ['A100-40GB', 'T4'],
      profiles: [
        {
          gpu_type: 'A100-40GB',
          points: stored.points,
          grad: stored.grad,
          limits: stored.limits,
          notes: ['one node'],
          model_parameters: 11_000_000,
          memory,
        },
      ],
      request: { gpus: [1, 2, 4, 8], target_samples: 500000, budget: 50 },
    });
    assert.deepEqual(
      body,
      JSON.parse(
        JSON.stringify(expected, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)),
      ),
    );
    assert.deepEqual(
      body.types.map((t) => [t.gpu_type, t.source]),
      [
        ['A100-40GB', 'measured'],
        ['T4', 'estimated'],
      ],
    );
    assert.equal(body.rows.length, 8);
    assert.ok(
      body.rows.every((r) => r.memory_per_gpu_bytes !== null),
      'memory from the profile kept beside the store',
    );
  });

  it('says memory is not checked without the data directory', async () => {
    const body = (await (
      await get('/dash/plan/resnet?gpu_type=A100-40GB', 'tok-alice', withoutDataDir)
    ).json()) as PlanReport;
    assert.ok(body.rows.every((r) => r.memory_per_gpu_bytes === null));
    assert.match(body.notes[0] as string, /memory not checked/);
  });

  it("answers another user's key as unknown, and refuses a bad query", async () => {
    assert.equal((await get('/dash/plan/resnet', 'tok-bob')).status, 404);
    assert.equal((await get('/dash/plan/resnet', 'tok-root')).status, 200);
    assert.equal((await get('/dash/plan/resnet?gpus=0,2', 'tok-alice')).status, 400);
    assert.equal((await get('/dash/plan/resnet?target_samples=-1', 'tok-alice')).status, 400);
  });
});
