/**
 * Job retention on a real store and data directory: ended jobs older than the retention go with
 * their directories, recent and active ones stay, usage totals (/metrics) survive, and a store
 * emptied of events by retention still opens (its high-water mark is not mistaken for loss).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { inProcessApi } from '../api/testing/in-process.js';
import { jobSpecFixture, replicaFixture } from '../store/job-fixture.js';
import { highWaterPath } from '../store/sqlite/durability.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { sweepEndedJobs } from './job-retention.js';
import { openCheckedStore } from './open-store.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-job-retention-'));
after(() => rmSync(root, { recursive: true, force: true }));
const spec = jobSpecFixture({ name: 'r' });
const DAY_MS = 86_400_000;

describe('job retention', () => {
  it('removes jobs ended over the retention with their directories; usage totals survive in /metrics', async () => {
    let clock = 1_700_000_000_000;
    const api = await inProcessApi({ now_ms: () => clock });
    const { store } = api;
    const jobs_dir = join(api.dir, 'jobs');
    const run = async (id: string, user: string, ms: number, end = true) => {
      await store.createJob({ id, name: id, user, spec }, user);
      await store.assignJob(id, { allocation: [0], devices: [0] }, 0, 's', 't');
      await store.launchJob(id, [replicaFixture(clock)], 'b', 't');
      mkdirSync(join(jobs_dir, id, 'logs'), { recursive: true });
      writeFileSync(join(jobs_dir, id, 'logs', '0.log'), 'x');
      clock += ms;
      if (end) await store.finishJob(id, 'succeeded', 'b', 'done');
    };
    for (let i = 0; i < 5; i++) await run(`old${i}`, i % 2 ? 'alice' : 'bob', 1000);
    clock += 40 * DAY_MS;
    await run('recent', 'alice', 2000);
    await run('live', 'bob', 500, false);
    const metric = async (name: string) =>
      (await api.call('GET', '/metrics', api.admin)).text
        .split('\n')
        .filter((l) => l.startsWith(name))
        .sort();
    const before = [
      ...(await metric('goodput_user_gpu_seconds_total')),
      ...(await metric('goodput_user_jobs_total')),
      ...(await metric('goodput_gpu_seconds_total')),
    ];
    assert.ok(before.includes('goodput_gpu_seconds_total 7'), before.join('\n'));
    assert.equal(await sweepEndedJobs(store, jobs_dir, 30 * DAY_MS, clock, 2), 5, 'in batches of 2');
    assert.deepEqual(
      (await store.listJobs()).map((j) => j.id),
      ['recent', 'live'],
    );
    assert.equal(existsSync(join(jobs_dir, 'old0')), false);
    assert.equal(existsSync(join(jobs_dir, 'recent', 'logs', '0.log')), true);
    const afterwards = [
      ...(await metric('goodput_user_gpu_seconds_total')),
      ...(await metric('goodput_user_jobs_total')),
      ...(await metric('goodput_gpu_seconds_total')),
    ];
    assert.deepEqual(afterwards, before, 'per-user GPU time and job counts are unchanged');
    assert.equal(await sweepEndedJobs(store, jobs_dir, Infinity, clock), 0, 'no retention: nothing removed');
    await api.close();
  });

  it('a store whose every job was removed still opens (the high-water mark counts removed events)', async () => {
    const db = join(root, 'empty.sqlite');
    let clock = 1_000;
    const store = new SqliteStore(db, { high_water_file: highWaterPath(db), now_ms: () => clock });
    for (const id of ['a', 'b']) {
      await store.createJob({ id, name: id, user: 'u', spec }, 'u');
      await store.finishJob(id, 'cancelled', 'u', 'x');
    }
    clock += DAY_MS;
    assert.equal(await sweepEndedJobs(store, join(root, 'jobs'), 1000, clock), 2);
    await store.close();
    const reopened = await openCheckedStore(db, { accept_store_loss: false, log: () => {} });
    assert.deepEqual(await reopened.listJobs(), []);
    await reopened.close();
  });
});
