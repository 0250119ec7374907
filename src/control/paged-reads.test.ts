import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobSpecFixture, replicaFixture } from '../store/job-fixture.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { Turns } from '../util/turns.js';
import { jobsInTurns, liveReplicasInTurns } from './paged-reads.js';

describe('paged reads', () => {
  it('reads every live replica a page at a time, in listLiveReplicas order, giving way between pages', async () => {
    const store = new SqliteStore(':memory:');
    // 3 jobs of 3, 2 and 1 ranks; the second job's rank 1 has exited.
    for (const [id, ranks] of [
      ['x', 3],
      ['y', 2],
      ['z', 1],
    ] as const) {
      const devices = Array.from({ length: ranks }, (_, k) => k);
      await store.createJob({ id, name: id, user: 'u', spec: jobSpecFixture({ max_replicas: 3 }) }, 'u');
      await store.assignJob(id, { allocation: devices.map(() => 0), devices }, 0, 's', 'placed');
      await store.launchJob(
        id,
        devices.map((rank) => replicaFixture(0, { rank, device: rank })),
        'b',
        'launched',
      );
    }
    await store.recordReplicaExit({ job_id: 'y', attempt: 0, rank: 1, exit_code: 1 }, 'backend');
    const ids = (rs: readonly { job_id: string; rank: number }[]) => rs.map((r) => `${r.job_id}/${r.rank}`);
    const all = await store.listLiveReplicas();
    assert.deepEqual(ids(all), ['x/0', 'x/1', 'x/2', 'y/0', 'z/0']);
    let pauses = 0;
    const counting = Object.assign(new Turns(0), { pause: async () => void pauses++ });
    for (const page of [1, 2, 4, 5, 100]) {
      pauses = 0;
      assert.deepEqual(await liveReplicasInTurns(store, counting, page), all, `pages of ${page}`);
      assert.equal(pauses, Math.floor(all.length / page), `pages of ${page}: a pause between full pages`);
    }
    // Jobs: the three running ones and a queued one, in submission order; only the states asked for.
    await store.createJob({ id: 'w', name: 'w', user: 'u', spec: jobSpecFixture() }, 'u');
    const states = ['queued', 'running'] as const;
    const jobs = await store.listJobs({ states });
    assert.equal(jobs.length, 4);
    for (const page of [1, 3, 4, 100]) {
      pauses = 0;
      assert.deepEqual(await jobsInTurns(store, states, counting, page), jobs, `pages of ${page}`);
      assert.equal(pauses, Math.ceil(jobs.length / page) - 1, `pages of ${page}: a pause between pages`);
    }
    assert.deepEqual(await jobsInTurns(store, ['succeeded'], counting), []);
    await store.close();
  });

  it('gives way within a few hundred job rows by default (1,000 parsed rows held the event loop 15-30 ms)', async () => {
    const store = new SqliteStore(':memory:');
    for (let i = 0; i < 300; i++)
      await store.createJob({ id: `j${i}`, name: `j${i}`, user: 'u', spec: jobSpecFixture() }, 'u');
    let pauses = 0;
    const counting = Object.assign(new Turns(0), { pause: async () => void pauses++ });
    assert.equal((await jobsInTurns(store, ['queued'], counting)).length, 300);
    assert.ok(pauses >= 1, `300 job rows read without giving way (${pauses} pauses)`);
    await store.close();
  });
});
