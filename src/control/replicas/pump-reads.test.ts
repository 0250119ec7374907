/**
 * The launcher's pump (every tick) does not read every live replica (at 16,000 replicas that read
 * cost tens of ms each 250 ms tick, and a third of a 16,384-GPU server's CPU while any job was
 * starting; bench:scale, issue #49): on a steady cluster it reads none, and while a job waits to
 * start only those of the jobs and nodes concerned. Real SQLite store, fake backend and clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePlain, fakePlane, type FakePlane } from '../../../test-support/control/fake-plane.js';

/** A fifo plane on `slots` slots with one job of `min`-`max` replicas running for an hour. */
async function planeRunning(slots: number, name: string, min_replicas: number, max_replicas: number) {
  const plane = await fakePlane({ policy: 'fifo', slots, interval_s: 3600, grace_s: 10 });
  const job = await plane.submit({
    name,
    command: fakePlain(3600),
    min_replicas,
    max_replicas,
    max_restarts: 0,
    preemptible: true,
    priority: 0,
  });
  await plane.clock.until(async () => (await plane.store.getJob(job.id))!.state === 'running', 10_000);
  return { plane, job };
}

/** A plane on 2 slots with one job running for an hour, and counters of the two replica reads. */
async function steadyPlane(max_replicas: number): Promise<{ plane: FakePlane; reads: { all: number; some: number } }> {
  const { plane } = await planeRunning(2, 'steady', 1, max_replicas);
  const { store } = plane;
  const reads = { all: 0, some: 0 };
  const readAll = store.listLiveReplicas.bind(store);
  const readSome = store.listLiveReplicasFor.bind(store);
  store.listLiveReplicas = () => {
    reads.all++;
    return readAll();
  };
  store.listLiveReplicasFor = (ids, nodes) => {
    reads.some++;
    return readSome(ids, nodes);
  };
  return { plane, reads };
}

describe('the pump', () => {
  it('reads the live replicas only at the watch (every 2 s), not at every 250 ms tick', async () => {
    const { plane, reads } = await steadyPlane(2);
    await plane.clock.advance(5_000);
    reads.all = 0;
    await plane.clock.advance(10_000); // 40 ticks, 5 watches
    assert.ok(reads.all <= 6, `the live replicas were read ${reads.all} times in 40 ticks`);
    assert.ok(reads.all >= 4, `the watch still reads them (${reads.all} times in 10 s)`);
    const [job] = await plane.store.listJobs({});
    assert.equal(job!.state, 'running');
    await plane.close();
  });

  it('pumps once for the exits of an attempt that end together, not once per rank', async () => {
    const { plane, job } = await planeRunning(8, 'eight', 8, 8);
    const { clock, store } = plane;
    const listJobs = store.listJobs.bind(store);
    let pumps = 0;
    store.listJobs = (query) => {
      if (query?.states?.join() === 'starting,rescaling') pumps++;
      return listJobs(query);
    };
    // The cancel's SIGTERM ends the 8 ranks at once; besides their pump, at most one 250 ms tick
    // and the round they ask for pump in these 200 ms (one pump per exit made it 9).
    await plane.controller.cancel(job.id, 'u');
    await clock.advance(200);
    assert.deepEqual(await store.listLiveReplicas(), []);
    assert.ok(pumps <= 3, `${pumps} pumps for 8 exits`);
    await plane.close();
  });

  it('while a job waits to start, reads the live replicas of the jobs and nodes concerned only', async () => {
    const { plane, reads } = await steadyPlane(1);
    const { clock, store } = plane;
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
    assert.ok(reads.all <= watches, `every live replica was read ${reads.all} times, beyond the ${watches} watches`);
    assert.ok(reads.some >= 4, `the launcher read the replicas it needs (${reads.some} times)`);
    const steady = (await store.listJobs({})).find((j) => j.name === 'steady');
    assert.equal(steady!.state, 'running');
    await plane.close();
  });
});
