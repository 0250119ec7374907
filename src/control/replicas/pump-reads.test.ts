/**
 * The launcher's pump (every tick) on a steady cluster: no job starting or stopping and no kill
 * due, so it does not read every live replica (at 16,000 replicas that read cost tens of ms each
 * 250 ms tick; bench:scale, issue #49). Real SQLite store, fake backend and clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePlain, fakePlane } from '../../../test-support/control/fake-plane.js';

describe('the pump on a steady cluster', () => {
  it('reads the live replicas only at the watch (every 2 s), not at every 250 ms tick', async () => {
    const plane = await fakePlane({ policy: 'fifo', slots: 2, interval_s: 3600, grace_s: 10 });
    const { clock, store } = plane;
    const job = await plane.submit({
      name: 'j',
      command: fakePlain(3600),
      min_replicas: 1,
      max_replicas: 2,
      max_restarts: 0,
      preemptible: true,
      priority: 0,
    });
    await clock.until(async () => (await store.getJob(job.id))!.state === 'running', 10_000);
    await clock.advance(5_000);
    let reads = 0;
    const read = store.listLiveReplicas.bind(store);
    store.listLiveReplicas = () => {
      reads++;
      return read();
    };
    await clock.advance(10_000); // 40 ticks, 5 watches
    assert.ok(reads <= 6, `the live replicas were read ${reads} times in 40 ticks`);
    assert.ok(reads >= 4, `the watch still reads them (${reads} times in 10 s)`);
    assert.equal((await store.getJob(job.id))!.state, 'running');
    await plane.close();
  });

  it('while a job waits to start, reads the live replicas of the jobs and nodes concerned only', async () => {
    const plane = await fakePlane({ policy: 'fifo', slots: 2, interval_s: 3600, grace_s: 10 });
    const { clock, store } = plane;
    const steady = await plane.submit({
      name: 'steady',
      command: fakePlain(3600),
      min_replicas: 1,
      max_replicas: 1,
      max_restarts: 0,
      preemptible: true,
      priority: 0,
    });
    await clock.until(async () => (await store.getJob(steady.id))!.state === 'running', 10_000);
    let all = 0;
    let some = 0;
    const readAll = store.listLiveReplicas.bind(store);
    const readSome = store.listLiveReplicasFor.bind(store);
    store.listLiveReplicas = () => {
      all++;
      return readAll();
    };
    store.listLiveReplicasFor = (ids, nodes) => {
      some++;
      return readSome(ids, nodes);
    };
    // A job that fails after 1.5 s and once more after a restart backoff: it waits to start for
    // a few ticks (its launch, the backoff), then fails.
    const from_ms = clock.now_ms();
    const crashing = await plane.submit({
      name: 'crashing',
      command: [process.execPath, '-e', 'setTimeout(() => process.exit(1), 1500)'],
      min_replicas: 1,
      max_replicas: 1,
      max_restarts: 20,
      preemptible: true,
      priority: 0,
    });
    await clock.until(async () => (await store.getJob(crashing.id))!.state === 'failed', 30_000);
    const watches = Math.ceil((clock.now_ms() - from_ms) / 2000) + 1;
    assert.ok((await store.getJob(crashing.id))!.launches >= 2, 'it was restarted once');
    assert.ok(all <= watches, `every live replica was read ${all} times, beyond the ${watches} watches`);
    assert.ok(some >= 4, `the launcher read the replicas it needs (${some} times)`);
    assert.equal((await store.getJob(steady.id))!.state, 'running');
    await plane.close();
  });
});
