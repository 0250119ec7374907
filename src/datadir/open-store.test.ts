/**
 * A damaged or truncated store must be refused, not served: a damaged table page made every call answer 500 while /v1/health said
 * 200, and a deleted WAL lost acknowledged jobs without a word. Now `goodput up` refuses a
 * damaged store and one that lost acknowledged work (the high-water mark), /v1/health answers
 * 503 naming the damage, and `goodput backup` / `goodput restore` bring a store back.
 */
import { reportBatch } from '../store/report-batch.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { inProcessApi } from '../api/testing/in-process.js';
import {
  cleanup,
  killOwnGroup,
  runCli,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { packagePath } from '../util/package-root.js';
import { jobSpecFixture } from '../store/job-fixture.js';
import { measuredStepFixture } from '../goodput/testing/perf-fixture.js';

const dirs: string[] = [];
const servers: ServerProcess[] = [];
after(() => {
  // Every server first: two of them may share a data directory, and a live one writes into it.
  for (const s of servers) killOwnGroup(s.pid, s.data_dir);
  for (const s of servers) cleanup(s.data_dir, [s]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});
const dataDir = () => {
  const d = tempDataDir('goodput-store-');
  dirs.push(d);
  return d;
};

const measurement = (step: number) => measuredStepFixture({ time_s: step, step, breakdown: { pad: step } });

/** A closed store with one job and enough reports to fill many pages. Returns the job id. */
async function fillStore(db: string): Promise<string> {
  const store = new SqliteStore(db, { background_checkpoint_ms: 0 });
  const spec = jobSpecFixture({ name: 'j', workdir: '/' });
  await store.createJob({ id: 'job1', name: 'j', user: 'admin', spec }, 'test');
  for (let i = 0; i < 40; i++)
    await store.addReports(
      reportBatch(
        'job1',
        0,
        undefined,
        Array.from({ length: 25 }, (_, k) => measurement(i * 25 + k)),
      ),
    );
  await store.close();
  return 'job1';
}

/** Overwrites one page in the middle of the file with garbage. */
function damagePage(db: string): void {
  const pages = statSync(db).size / 4096;
  const fd = openSync(db, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, Math.floor(pages / 2) * 4096);
  closeSync(fd);
}

describe('store integrity', () => {
  it('goodput up refuses a store with a damaged page', async () => {
    const d = dataDir();
    await fillStore(join(d, 'goodput.sqlite'));
    damagePage(join(d, 'goodput.sqlite'));
    const r = await runCli(['up', '--data-dir', d, '--port', '0', '--cpu-slots', '1']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /E_STORE_DAMAGED.*damaged.*goodput restore/s);
  });

  it('/v1/health answers 503 once a request met the damage (and names it)', async () => {
    const d = dataDir();
    await fillStore(join(d, 'db.sqlite'));
    damagePage(join(d, 'db.sqlite'));
    const api = await inProcessApi({ db_file: join(d, 'db.sqlite') });
    try {
      assert.equal((await api.call('GET', '/v1/health')).status, 200, 'the damaged page is not read yet');
      const r = await api.call('GET', '/v1/jobs/job1/reports?limit=100000', api.admin);
      assert.equal(r.status, 503);
      assert.equal(r.json.error.code, 'E_STORE_DAMAGED');
      const h = await api.call('GET', '/v1/health');
      assert.equal(h.status, 503);
      assert.equal(h.json.store.state, 'damaged');
      assert.match(h.json.store.detail, /SQLITE_CORRUPT/);
    } finally {
      await api.close();
    }
  });

  /** Runs a server-like writer that commits 3 jobs and dies (SIGKILL) with them still in the WAL. */
  const crashWithJobsInWal = (db: string) => {
    const store = pathToFileURL(packagePath('dist', 'src', 'store', 'sqlite', 'sqlite-store.js')).href;
    const script = `const { SqliteStore } = await import(${JSON.stringify(store)});
      const s = new SqliteStore(${JSON.stringify(db)}, { background_checkpoint_ms: 0, high_water_file: ${JSON.stringify(db + '.seq')} });
      const spec = { name: 'j', command: ['true'], workdir: '/', env: {}, min_replicas: 0, max_replicas: 1, max_restarts: 0, preemptible: true, priority: 0 };
      for (let i = 0; i < 3; i++) await s.createJob({ id: 'j' + i, name: 'j', user: 'admin', spec }, 'test');
      process.kill(process.pid, 'SIGKILL');`;
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script]);
    } catch {
      // killed, as intended
    }
    assert.ok(statSync(`${db}-wal`).size > 0, 'the jobs are in the WAL');
  };

  it(
    'goodput up refuses a store whose WAL was damaged after a crash (acknowledged jobs lost)',
    { timeout: 60_000 },
    async () => {
      const d = dataDir();
      const db = join(d, 'goodput.sqlite');
      crashWithJobsInWal(db);
      // Garbage over the frames after the first: SQLite drops frames whose checksums fail, silently.
      const fd = openSync(`${db}-wal`, 'r+');
      writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 32 + 24 + 4096 + 24 + 1000);
      closeSync(fd);
      const r = await runCli(['up', '--data-dir', d, '--port', '0', '--cpu-slots', '1']);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /E_STORE_LOST.*lost acknowledged work/s);
    },
  );

  it(
    'goodput up refuses a store whose WAL was deleted after a crash, unless told to accept it',
    { timeout: 60_000 },
    async () => {
      const d = dataDir();
      const db = join(d, 'goodput.sqlite');
      crashWithJobsInWal(db);
      rmSync(`${db}-wal`);
      const r = await runCli(['up', '--data-dir', d, '--port', '0', '--cpu-slots', '1']);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /E_STORE_LOST.*lost acknowledged work.*--accept-store-loss/s);
      const s = await startServerProcess(d, ['--cpu-slots', '1', '--accept-store-loss']);
      servers.push(s);
      assert.match(readFileSync(join(d, 'up.log'), 'utf8'), /WARNING: the store .* lost acknowledged work/);
      assert.equal((await s.client.listJobs()).length, 0);
    },
  );

  it(
    'goodput backup copies a live store; goodput restore puts it back (refused while the server runs)',
    { timeout: 60_000 },
    async () => {
      const d = dataDir();
      const s = await startServerProcess(d, ['--cpu-slots', '1', '--interval-s', '60']);
      servers.push(s);
      const kept = await s.client.submit({ name: 'kept', command: ['true'], workdir: d, max_replicas: 1 });
      const file = join(d, 'backup.sqlite');
      const b = await runCli(['backup', file, '--data-dir', d, '--json']);
      assert.equal(b.status, 0, b.stderr);
      assert.equal(JSON.parse(b.stdout).jobs, 1);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      await s.client.submit({ name: 'after-backup', command: ['true'], workdir: d, max_replicas: 1 });
      const refused = await runCli(['restore', file, '--data-dir', d]);
      assert.match(refused.stderr, /E_RUNNING/);
      process.kill(s.pid, 'SIGTERM');
      await waitFor('the server to stop', 10_000, async () => !existsSync(join(d, 'server.pid')));
      const r = await runCli(['restore', file, '--data-dir', d]);
      assert.equal(r.status, 0, r.stderr);
      const again = await startServerProcess(d, ['--cpu-slots', '1', '--interval-s', '60']);
      servers.push(again);
      assert.deepEqual(
        (await again.client.listJobs()).map((j) => j.id),
        [kept.id],
      );
    },
  );
});
