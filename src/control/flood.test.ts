/**
 * One user's flood on a shared server, on the fake backend and clock (as controller.test.ts):
 * the per-user limits refuse what is past them (E_JOB_LIMIT, nothing stored), a freed slot goes
 * to another user's waiting job rather than the flooder's next one, and a bulk cancel by filter
 * clears the flood (and stops the flooder's running replicas).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeBackend, FakeCluster, fakeNode } from '../backends/fake-backend.js';
import { GoodputError } from '../core/errors.js';
import { findPolicy } from '../policy/registry.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { UserJobLimits } from '../store/store.js';
import { ACTIVE_STATES } from '../store/lifecycle.js';
import type { JobSpec } from '../store/types.js';
import { FakeClock } from '../util/clock.js';
import { Controller } from './controller.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-flood-'));
after(() => rmSync(root, { recursive: true, force: true }));
const INTERVAL_S = 60;

async function cluster(policy: string, user_limits?: UserJobLimits) {
  const clock = new FakeClock(1_700_000_000_000);
  const store = new SqliteStore(':memory:', { now_ms: () => clock.now_ms() });
  const backend = new FakeBackend(new FakeCluster([fakeNode('n0', 2)], clock));
  const controller = new Controller({
    store,
    backend,
    policy: findPolicy(policy)!.create({ seed: 0 }),
    data_dir: mkdtempSync(join(root, 'data-')),
    secret: 's',
    api_url: 'http://127.0.0.1:1',
    interval_s: INTERVAL_S,
    grace_s: 10,
    clock,
    ...(user_limits ? { user_limits } : {}),
  });
  await controller.start();
  return {
    clock,
    store,
    controller,
    close: async () => {
      await controller.stop();
      await store.close();
    },
  };
}

/** A one-slot job that runs ten minutes (fake time: each minute costs wall time in the controller's pump). */
const hour: JobSpec = {
  name: 'ten',
  command: [process.execPath, '-e', 'setTimeout(() => process.exit(0), 600_000);'],
  workdir: root,
  env: {},
  min_replicas: 1,
  max_replicas: 1,
  max_restarts: 0,
  preemptible: false,
  priority: 0,
};

describe('a flood of submits from one user', () => {
  // Tiresias keeps its own queue in the order jobs first appeared (stateful): not reordered here.
  for (const policy of ['fifo', 'goodput']) {
    it(`${policy}: the first slot that frees goes to another user's waiting job, within 2 rounds`, async () => {
      const c = await cluster(policy);
      const flood = [];
      for (let i = 0; i < 300; i++) flood.push(await c.controller.submit(hour, 'flooder', 'flooder'));
      await c.clock.until(async () => (await c.store.listJobs({ states: ['running'] })).length === 2, 60_000, 1000);
      const other = await c.controller.submit({ ...hour, name: 'mine' }, 'alice', 'alice');
      await c.clock.until(
        async () => (await c.store.listJobs({ user: 'flooder', states: ['succeeded'] })).length > 0,
        1_200_000,
        5000,
      );
      const freed_ms = Math.min(
        ...(await c.store.listJobs({ user: 'flooder', states: ['succeeded'] })).map((j) => j.finished_at_ms!),
      );
      await c.clock.until(
        async () => (await c.store.getJob(other.id))!.state === 'running',
        3 * INTERVAL_S * 1000,
        1000,
      );
      const assigned = (await c.store.listEvents(other.id)).find((e) => e.kind === 'assigned')!;
      assert.ok(
        assigned.at_ms - freed_ms <= 2 * INTERVAL_S * 1000,
        `assigned ${(assigned.at_ms - freed_ms) / 1000} s after the slot freed`,
      );
      const firstAssigned = async (id: string) =>
        (await c.store.listEvents(id)).find((e) => e.kind === 'assigned')?.at_ms ?? Infinity;
      const ahead = [];
      for (const j of flood.slice(2)) if ((await firstAssigned(j.id)) < assigned.at_ms) ahead.push(j.id);
      assert.deepEqual(ahead, [], "no third flooder job was assigned before alice's");
      await c.close();
    });
  }

  it('one user alone: jobs start in submission order, as before', async () => {
    const c = await cluster('fifo');
    const jobs = [];
    for (let i = 0; i < 6; i++) jobs.push(await c.controller.submit({ ...hour, name: `j${i}` }, 'solo', 'solo'));
    await c.clock.until(async () => (await c.store.listJobs({ states: ['succeeded'] })).length === 4, 1_800_000, 5000);
    const started = (await c.store.listJobs({ user: 'solo' }))
      .filter((j) => j.started_at_ms !== null)
      .sort((a, b) => a.started_at_ms! - b.started_at_ms! || a.submitted_at_ms - b.submitted_at_ms);
    assert.deepEqual(started.map((j) => j.name).slice(0, 4), ['j0', 'j1', 'j2', 'j3']);
    await c.close();
  });

  it('refuses submits past the per-user limits with E_JOB_LIMIT; another user still submits', async () => {
    const c = await cluster('fifo', { max_active: 6, max_queued: 3 });
    for (let i = 0; i < 3; i++) await c.controller.submit(hour, 'flooder', 'flooder');
    await assert.rejects(
      c.controller.submit(hour, 'flooder', 'flooder'),
      (e: unknown) =>
        e instanceof GoodputError &&
        e.code === 'E_JOB_LIMIT' &&
        /3 queued jobs.*--max-queued-jobs-per-user 3.*goodput cancel --user flooder --state queued/.test(e.message),
    );
    await c.controller.submit(hour, 'alice', 'alice');
    await c.clock.until(async () => (await c.store.listJobs({ states: ['running'] })).length === 2, 60_000);
    // Two of the flooder's started: room for more queued, up to 6 not ended in all.
    await c.controller.submit(hour, 'flooder', 'flooder');
    await assert.rejects(
      c.controller.submit(hour, 'flooder', 'flooder'),
      (e: unknown) => e instanceof GoodputError && e.code === 'E_JOB_LIMIT',
    );
    assert.equal((await c.store.listJobs({ user: 'flooder' })).length, 4);
    await c.close();
  });

  it('bulk cancel by user and state clears the queue in one call and stops the running replicas', async () => {
    const c = await cluster('fifo');
    for (let i = 0; i < 50; i++) await c.controller.submit(hour, 'flooder', 'flooder');
    const mine = await c.controller.submit(hour, 'alice', 'alice');
    await c.clock.until(async () => (await c.store.listJobs({ states: ['running'] })).length === 2, 60_000);
    // A slot each (the fair order): the flooder's first job and alice's.
    assert.equal((await c.store.getJob(mine.id))!.state, 'running');
    const queued = await c.controller.cancelMatching({ user: 'flooder', states: ['queued'] }, 'root');
    assert.equal(queued.length, 49);
    const running = await c.controller.cancelMatching({ user: 'flooder' }, 'root');
    assert.deepEqual(
      running.map((j) => j.from),
      ['running'],
    );
    await c.clock.until(async () => (await c.store.listLiveReplicas()).every((r) => r.job_id === mine.id), 30_000);
    assert.equal((await c.store.getJob(mine.id))!.state, 'running', "alice's job goes on");
    await c.close();
  });
  it('a submit reads no job list: the same-name note is one filtered, bounded store query', async () => {
    const c = await cluster('fifo');
    for (let i = 0; i < 30; i++) await c.controller.submit(hour, 'flooder', 'flooder');
    const calls: { method: string; filter: unknown }[] = [];
    for (const method of ['listJobs', 'listJobsPage'] as const) {
      const original = c.store[method].bind(c.store) as (filter?: unknown) => Promise<unknown>;
      (c.store as unknown as Record<string, unknown>)[method] = (filter?: unknown) => {
        calls.push({ method, filter });
        return original(filter);
      };
    }
    const { notes } = await c.controller.submitWithNotes(hour, 'flooder', 'flooder');
    assert.deepEqual(
      calls.map((x) => x.method),
      ['listJobsPage'],
      'the submit read the store once, by page',
    );
    assert.deepEqual(calls[0]!.filter, { user: 'flooder', name: 'ten', states: ACTIVE_STATES, limit: 21 });
    assert.match(notes.at(-1) ?? '', /^warning: 20 other active job\(s\) are named 'ten'/);
    await c.close();
  });
});
