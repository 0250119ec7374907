import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { profilePoint } from '../../goodput/profile.js';
import { storeConformance } from '../conformance.js';
import { MIGRATIONS } from './migrations.js';
import { SqliteStore } from './sqlite-store.js';
import { jobSpecFixture } from '../job-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeConformance('sqlite', async (now_ms) => new SqliteStore(join(dir, `db-${n++}.sqlite`), { now_ms }));

describe('SqliteStore specifics', () => {
  it('migrates to the latest version, persists across reopen, uses WAL', async () => {
    const path = join(dir, 'persist.sqlite');
    const s1 = new SqliteStore(path);
    assert.equal(s1.schemaVersion(), MIGRATIONS.length);
    await s1.createJob(
      {
        id: 'x',
        name: 'x',
        user: 'u',
        spec: jobSpecFixture({ name: 'x', workdir: '/' }),
      },
      'u',
    );
    await s1.close();
    const s2 = new SqliteStore(path);
    assert.equal((await s2.getJob('x'))?.state, 'queued');
    await s2.close();
  });

  it('migrates a version-1 database to remaining_samples, keeping its jobs and reports', async () => {
    const path = join(dir, 'v1.sqlite');
    const v1 = new Database(path);
    v1.exec(MIGRATIONS[0]!);
    v1.pragma('user_version = 1');
    v1.prepare(
      "INSERT INTO jobs (id, name, user, spec, state, submitted_at_ms, step, samples, grad, reason) VALUES ('old', 'old', 'u', ?, 'running', 5, 7, 448, ?, 'launched')",
    ).run(JSON.stringify(jobSpecFixture({ name: 'old', workdir: '/' })), JSON.stringify({ sqr: 0.5, var: 1.5 }));
    v1.prepare("INSERT INTO reports (job_id, attempt, received_at_ms, step, body) VALUES ('old', 0, 5, 7, ?)").run(
      JSON.stringify({ step: 7 }),
    );
    v1.close();
    const s = new SqliteStore(path);
    assert.equal(s.schemaVersion(), MIGRATIONS.length);
    const old = (await s.getJob('old'))!;
    assert.deepEqual(
      [old.state, old.step, old.samples, old.grad, old.remaining_samples],
      ['running', 7, 448, { sqr: 0.5, var: 1.5 }, null],
    );
    assert.deepEqual(
      (await s.listReports('old')).map((r) => r.step),
      [7],
    );
    const m = {
      time_s: 1,
      step: 8,
      num_nodes: 1,
      num_replicas: 1,
      local_bsz: 64,
      accum_steps: 0,
      step_time_s: 0.1,
      sync_time_s: 0,
      remaining_samples: 512,
    };
    assert.equal(
      (await s.addReports({ job_id: 'old', attempt: 0, limits: undefined, reports: [m], profile: [profilePoint(m)] }))
        .job.remaining_samples,
      512,
    );
    await s.close();
  });

  it("migrates a version-9 database's job profiles to type '' (unknown), which every type reads", async () => {
    const path = join(dir, 'v9.sqlite');
    const v9 = new Database(path);
    for (const m of MIGRATIONS.slice(0, 9)) v9.exec(m);
    v9.pragma('user_version = 9');
    v9.prepare(
      "INSERT INTO profiles (job_id, num_nodes, num_replicas, local_bsz, count, sum_accum_step_time_s, sum_optim_step_time_s) VALUES ('old', 1, 2, 64, 4, 0.4, 0.8)",
    ).run();
    v9.close();
    const s = new SqliteStore(path);
    assert.equal(s.schemaVersion(), MIGRATIONS.length);
    const rows = [
      {
        gpu_type: '',
        num_nodes: 1,
        num_replicas: 2,
        local_bsz: 64,
        count: 4,
        accum_step_time_s: 0.1,
        optim_step_time_s: 0.2,
      },
    ];
    assert.deepEqual(await s.getProfile('old'), rows);
    assert.deepEqual(await s.getProfile('old', 'a100'), rows);
    await s.close();
  });
});
