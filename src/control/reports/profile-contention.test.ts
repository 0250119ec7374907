/**
 * Issue 52: six jobs of one script on 2 cores had their profile discarded ("an optimizer step
 * took 0.101 s where the profile predicts 0.0166 s, so this job is not the model the profile
 * describes"): contention on a busy host is not a different model. The discard rule now tells
 * them apart from the other jobs on the host and a repeated measurement.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuNodeFixture } from '../testing/control-driver.js';
import { scopedKey } from '../../core/profile-scope.js';
import { PERF_FIXTURE, perfPoint } from '../../goodput/testing/perf-fixture.js';
import type { ProfilePoint } from '../../goodput/types.js';
import { contentionExplains } from '../../model/discard.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { trainSpecFixture } from '../../store/job-fixture.js';
import { ProfileBook } from './profile-book.js';
import { refitJob } from './refit.js';

const perf = PERF_FIXTURE;
const point = (num_replicas: number, scale = 1, local_bsz = 32): ProfilePoint =>
  perfPoint({ num_replicas, scale, local_bsz });
const node = cpuNodeFixture(8);
const spec = trainSpecFixture();
const replica = (rank: number) => ({
  rank,
  device: rank,
  node: 'local',
  launch_id: '',
  pid: 0,
  proc_start: '',
  log_path: '',
  started_at_ms: 0,
  gpu_type: 'cpu',
});

describe('contentionExplains (pure)', () => {
  const slow = [point(2, 3)];
  it('slower while other jobs share a host of fewer cores: contention', () => {
    assert.equal(contentionExplains(perf, slow, { own_processes: 2, other_processes: 4, cores: 2 }), true);
    assert.equal(
      contentionExplains(perf, slow, { own_processes: 2, other_processes: 4, cores: null }),
      true,
      'cores unknown',
    );
  });
  it('false friends: alone on the host, enough cores, or faster than predicted are another model', () => {
    assert.equal(
      contentionExplains(perf, slow, { own_processes: 2, other_processes: 0, cores: 2 }),
      false,
      "alone: its own replicas are in the profile's shape",
    );
    assert.equal(
      contentionExplains(perf, slow, { own_processes: 2, other_processes: 2, cores: 16 }),
      false,
      '4 processes on 16 cores do not contend',
    );
    assert.equal(
      contentionExplains(perf, [point(2, 0.3)], { own_processes: 2, other_processes: 4, cores: 2 }),
      false,
      'contention never makes a step faster',
    );
    assert.equal(
      contentionExplains(perf, [point(2, 3), point(1, 0.3)], { own_processes: 2, other_processes: 4, cores: 2 }),
      false,
      'one point faster',
    );
  });
});

describe('ProfileBook under contention', () => {
  it('keeps the profile while other jobs slow the job down, and discards it when a quiet measurement still disagrees', async () => {
    const store = new SqliteStore(':memory:');
    const lines: string[] = [];
    const book = new ProfileBook(
      store,
      () => [node],
      (l) => lines.push(l),
    );
    const learn = async (id: string, own: ProfilePoint[]) =>
      refitJob({ store, log: () => {}, profiles: book }, (await store.getJob(id))!, own);
    const run = async (id: string, n: number) => {
      await store.createJob({ id, name: id, user: 'u', spec }, 'u');
      await store.assignJob(id, { allocation: Array(n).fill(0), devices: [...Array(n).keys()] }, 0, 's', 'placed');
      await store.launchJob(id, [...Array(n).keys()].map(replica), 'b', 'r');
    };
    await run('a', 2);
    await learn('a', [point(1), point(2)]);
    await store.finishJob('a', 'succeeded', 'c', 'done');
    await run('w', 2);
    for (const id of ['x', 'y']) await run(id, 2);
    await learn('w', [point(2, 3)]);
    assert.notEqual(
      (await store.getJob('w'))!.profile_use,
      'discarded',
      'three times slower beside 4 processes of other jobs',
    );
    assert.match(
      lines.join('\n'),
      /profile of 'train' on cpu kept for now: an optimizer step at 2 replicas and local batch 32 took [\d.]+ s where the profile predicts [\d.]+ s while 4 processes of other jobs share its host \(contention, not another model\); judged again/,
    );
    assert.deepEqual(
      (await store.getKeyProfile(scopedKey('train', 'u'), 'cpu'))!.job_ids,
      ['a'],
      'its slowed points stay out of the profile',
    );
    // The others end; the same slowdown measured alone is another model.
    for (const id of ['x', 'y']) await store.finishJob(id, 'succeeded', 'c', 'done');
    await learn('w', [point(2, 3)]);
    assert.equal((await store.getJob('w'))!.profile_use, 'discarded');
    await store.close();
  });
});
