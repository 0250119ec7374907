/**
 * The part of the Store conformance suite about reads and writes whose cost must follow the
 * active and recent jobs, not the history: the end-time window, per-user submit limits, bulk
 * cancel and retention of ended jobs; run by `storeConformance`.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { jobSpecFixture, replicaFixture } from './job-fixture.js';
import type { Store } from './store.js';

const spec = jobSpecFixture({ name: 'h' });
const isLimit = (error: unknown) => error instanceof GoodputError && error.code === 'E_JOB_LIMIT';
const ids = (jobs: readonly { id: string }[]) => jobs.map((j) => j.id);

/** Creates one job per `id: user` entry, in order, named by its id (each with `keyed` ids as its submit key). */
async function createJobs(s: Store, owners: Record<string, string>, keyed = false): Promise<void> {
  for (const [id, user] of Object.entries(owners))
    await s.createJob({ id, name: id, user, spec, ...(keyed ? { idempotency_key: `key-${id}` } : {}) }, user);
}

/** Assigns job `id` to `devices` of node 0 and launches its attempt, as the controller does. */
async function runJob(s: Store, id: string, devices: number[] = [0]): Promise<void> {
  await s.assignJob(id, { allocation: devices.map(() => 0), devices }, 0, 'x', 'y');
  await s.launchJob(id, [replicaFixture(1_000_000, { log_path: '/l' })], 'x', 'y');
}

/** Registers the cases; `fresh` opens an empty store with the suite's clock; `tick` advances it. */
export function historyConformance(fresh: () => Promise<Store>, tick: (ms: number) => void): void {
  it('lists the jobs that had not ended before a time (active ones and those ended since)', async () => {
    const s = await fresh();
    for (const id of ['old', 'recent', 'active', 'running']) await s.createJob({ id, name: id, user: 'u', spec }, 'u');
    await s.finishJob('old', 'succeeded', 'x', 'done');
    tick(10_000);
    await s.finishJob('recent', 'failed', 'x', 'done');
    await s.assignJob('running', { allocation: [0], devices: [0] }, 0, 'x', 'y');
    const since = 1_000_000 + 5000;
    assert.deepEqual(ids(await s.listJobs({ ended_since_ms: since })), ['recent', 'active', 'running']);
    assert.deepEqual(ids(await s.listJobs({ ended_since_ms: since, states: ['failed', 'starting'] })), [
      'recent',
      'running',
    ]);
    assert.deepEqual(ids(await s.listJobs({ ended_since_ms: 0 })), ['old', 'recent', 'active', 'running']);
    await s.close();
  });

  it('refuses a submit past the per-user limits (E_JOB_LIMIT, nothing stored); other users and replays pass', async () => {
    const s = await fresh();
    const limits = { max_active: 3, max_queued: 2 };
    await s.createJob({ id: 'a', name: 'a', user: 'flood', spec, limits, idempotency_key: 'k' }, 'flood');
    await s.createJob({ id: 'b', name: 'b', user: 'flood', spec, limits }, 'flood');
    await assert.rejects(s.createJob({ id: 'c', name: 'c', user: 'flood', spec, limits }, 'flood'), isLimit);
    assert.equal(await s.getJob('c'), undefined);
    assert.equal(
      (await s.createJob({ id: 'a2', name: 'a', user: 'flood', spec, limits, idempotency_key: 'k' }, 'flood')).id,
      'a',
      'a replayed submit returns its job',
    );
    await s.createJob({ id: 'other', name: 'o', user: 'bob', spec, limits }, 'bob');
    await s.assignJob('a', { allocation: [0], devices: [0] }, 0, 'x', 'y');
    await s.createJob({ id: 'c', name: 'c', user: 'flood', spec, limits }, 'flood');
    await assert.rejects(
      s.createJob({ id: 'd', name: 'd', user: 'flood', spec, limits }, 'flood'),
      isLimit,
      '3 not ended: the active limit',
    );
    await s.finishJob('a', 'succeeded', 'x', 'done');
    await s.createJob(
      { id: 'd', name: 'd', user: 'flood', spec, limits: { max_active: 0, max_queued: Infinity } },
      'flood',
    );
    await s.close();
  });

  it('cancels every job matching a filter in one call, each with its event; others untouched', async () => {
    const s = await fresh();
    await createJobs(s, { q1: 'flood', q2: 'flood', run: 'flood', done: 'flood', bob: 'bob' });
    await runJob(s, 'run');
    await s.finishJob('done', 'succeeded', 'x', 'y');
    tick(4000);
    const queued = await s.cancelJobs(
      { user: 'flood', states: ['queued', 'succeeded'] },
      'admin',
      'cancelled by admin (bulk)',
    );
    assert.deepEqual(
      queued.map((j) => [j.id, j.from]),
      [
        ['q1', 'queued'],
        ['q2', 'queued'],
      ],
      'terminal states in the filter are ignored',
    );
    assert.deepEqual((await s.listEvents('q1')).map((e) => [e.kind, e.from_state, e.to_state, e.actor]).at(-1), [
      'cancelled',
      'queued',
      'cancelled',
      'admin',
    ]);
    assert.equal((await s.getJob('bob'))!.state, 'queued');
    assert.equal((await s.getJob('run'))!.state, 'running');
    const rest = await s.cancelJobs({ user: 'flood' }, 'admin', 'bulk');
    assert.deepEqual(
      rest.map((j) => [j.id, j.from]),
      [['run', 'running']],
    );
    const run = (await s.getJob('run'))!;
    assert.deepEqual(
      [run.state, run.finished_at_ms, run.attained_service_gpu_s, run.allocation],
      ['cancelled', 1_004_000, 4, []],
    );
    assert.deepEqual(await s.cancelJobs({ user: 'flood' }, 'admin', 'bulk'), []);
    assert.deepEqual(ids(await s.cancelJobs({ name: 'bob' }, 'admin', 'bulk')), ['bob']);
    await s.close();
  });

  it('removes ended jobs older than a time with their events, keeping per-user GPU time', async () => {
    const s = await fresh();
    const owners = { a: 'alice', b: 'alice', c: 'bob', live: 'bob' };
    await createJobs(s, owners, true);
    for (const id of Object.keys(owners)) await runJob(s, id, [0, 1]);
    tick(1000);
    for (const id of ['a', 'b', 'c']) await s.finishJob(id, 'succeeded', 'x', 'y');
    const before = await s.usage();
    assert.deepEqual(before, [
      { user: 'alice', jobs: 2, gpu_s: 4 },
      { user: 'bob', jobs: 2, gpu_s: 2 },
    ]);
    assert.deepEqual(await s.deleteEndedJobs(1_000_000, 10), [], 'none ended before then');
    tick(1000);
    assert.deepEqual(await s.deleteEndedJobs(1_001_500, 2), ['a', 'b'], 'at most limit, oldest end first');
    assert.deepEqual(await s.deleteEndedJobs(1_001_500, 10), ['c']);
    assert.equal(await s.getJob('a'), undefined);
    assert.deepEqual(await s.listEvents('a'), []);
    assert.deepEqual(await s.listReplicas('a'), []);
    assert.equal(await s.jobForSubmitKey('alice', 'key-a'), undefined);
    assert.deepEqual(ids(await s.listJobs()), ['live']);
    assert.deepEqual(await s.usage(), before, 'usage totals survive');
    await s.createJob({ id: 'a', name: 'a', user: 'alice', spec }, 'alice');
    assert.deepEqual((await s.usage())[0], { user: 'alice', jobs: 3, gpu_s: 4 });
    await s.close();
  });
}
