import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import type { ClusterSnapshot, JobTypes, NodeInfo, PolicyJob } from '../../core/cluster.js';
import { GoodputError } from '../../core/errors.js';
import { CIFAR_PERF, limitsFixture } from '../../goodput/testing/perf-fixture.js';
import type { GoodputModel } from '../../goodput/types.js';
import { buildJobTypes } from '../../model/job-types.js';
import { createSharedPolicy } from '../../policy/registry.js';
import { PolicyThread } from './policy-thread.js';
import { fromWire, toWire } from './snapshot-wire.js';

const nodes: NodeInfo[] = [
  { index: 0, name: 'a-0', gpus: 4, preemptible: false, gpu_type: 'a' },
  { index: 1, name: 'a-1', gpus: 4, preemptible: false, gpu_type: 'a' },
  { index: 2, name: 'b-0', gpus: 8, preemptible: false, gpu_type: 'b' },
];
const limits = limitsFixture({ max_local_bsz: 1024 });
const model = (scale: number): GoodputModel => ({
  perf: { ...CIFAR_PERF, alpha_c: CIFAR_PERF.alpha_c * scale },
  grad: { sqr: 0.05, var: 2 },
  limits,
});

/** Job `k`: measured on type a (odd k) or nowhere, running on node 0 when `running`. */
function job(k: number): PolicyJob {
  const own = k % 2 === 1 ? model(1 + k / 10) : undefined;
  const per_type: JobTypes = buildJobTypes({
    types: ['a', 'b'],
    own_type: own ? 'a' : undefined,
    model: (t) => (t === 'a' ? own : undefined),
    transferred: (t) => (t === 'b' && own ? model(0.5) : undefined),
    limits: () => limits,
    max_profiled: { a: own ? 2 : 0, b: 0 },
    remaining_samples: 1e6 * (k + 1),
    restart_s: 30,
    restarting: false,
  });
  return {
    id: `j${k}`,
    submitted_at_s: k,
    attained_service_gpu_s: 100 * k,
    min_replicas: 0,
    max_replicas: 8,
    max_profiled_replicas: own ? 2 : 0,
    restarts: 0,
    preemptible: true,
    priority: 0,
    limits,
    ...(own ? { model: own } : {}),
    per_type,
  };
}

const snapshot = (now_s: number, allocations: ClusterSnapshot['allocations'] = {}): ClusterSnapshot => ({
  now_s,
  nodes,
  jobs: Array.from({ length: 12 }, (_, k) => job(k)),
  allocations,
});

/** `snapshot` with jobs 0 .. count - 1: more than one part of the snapshots sent to the worker. */
const large = (count: number, now_s = 0, allocations: ClusterSnapshot['allocations'] = {}): ClusterSnapshot => ({
  ...snapshot(now_s, allocations),
  jobs: Array.from({ length: count }, (_, k) => job(k)),
});

/** Ends `thread`'s worker as a bug or out-of-memory would, once it has exited. */
async function killWorker(thread: PolicyThread): Promise<void> {
  const worker = (thread as unknown as { running: { worker: Worker } }).running.worker;
  const exited = once(worker, 'exit');
  await worker.terminate();
  await exited;
}

describe('a policy deciding in a worker thread', () => {
  const threads: PolicyThread[] = [];
  after(async () => {
    for (const t of threads) await t.close();
  });

  it('a snapshot carried as plain data is decided as the snapshot itself, on one type and several', async () => {
    for (const name of ['goodput', 'sia', 'tiresias']) {
      const inline = await createSharedPolicy(name, { seed: 0 });
      const carried = await createSharedPolicy(name, { seed: 0 });
      let allocations: ClusterSnapshot['allocations'] = {};
      for (let round = 0; round < 3; round++) {
        const s = snapshot(60 * round, allocations);
        const wire = structuredClone(toWire(s));
        const expected = inline.decide(s);
        assert.deepEqual(carried.decide(fromWire(wire)), expected, `${name}, round ${round}`);
        allocations = expected.allocations;
      }
    }
  });

  it("carries a job's model once where its model on a type is the same (a structured copy keeps shared objects shared)", () => {
    const s = snapshot(0);
    const model = (t: string) => (t === 'a' ? structuredClone(s.jobs[1]!.model) : undefined);
    const equal = { ...s.jobs[1]!, per_type: { ...s.jobs[1]!.per_type!, model } };
    const wire = toWire({ ...s, jobs: [equal, s.jobs[2]!] });
    assert.equal(wire.jobs[0]!.per_type!.models.a, wire.jobs[0]!.model, 'one object for both');
    assert.equal(wire.jobs[0]!.per_type!.models.b, null);
    assert.equal(wire.jobs[1]!.per_type!.models.a, null, 'a job without a model has none on any type');
    const copy = structuredClone(wire);
    assert.equal(copy.jobs[0]!.per_type!.models.a, copy.jobs[0]!.model);
  });

  it('decides as the same policy does in this thread, round after round (its state lives in the worker)', async () => {
    const thread = await PolicyThread.start({ name: 'goodput', options: { seed: 0 } });
    threads.push(thread);
    assert.equal(thread.name, 'goodput');
    assert.equal(thread.uses_profiles, true);
    const inline = await createSharedPolicy('goodput', { seed: 0 });
    let allocations: ClusterSnapshot['allocations'] = {};
    for (let round = 0; round < 4; round++) {
      const s = snapshot(60 * round, allocations);
      const expected = inline.decide(s);
      assert.deepEqual(await thread.decide(s), expected, `round ${round}`);
      allocations = expected.allocations;
    }
  });

  it("sends a large snapshot in parts with the caller's pause between them; decides called at once keep their order", async () => {
    const thread = await PolicyThread.start({ name: 'goodput', options: { seed: 0 } });
    threads.push(thread);
    const inline = await createSharedPolicy('goodput', { seed: 0 });
    // The first in three parts, the second in one: sent side by side, the second would end first.
    const first = large(750, 0);
    const firstExpected = inline.decide(first);
    const second = large(250, 60, firstExpected.allocations);
    const secondExpected = inline.decide(second);
    let pauses = 0;
    const pause = async (): Promise<void> => {
      pauses += 1;
      await new Promise<void>((done) => setImmediate(done));
    };
    // The second is asked for before the first is sent; it is decided after the first, on the state the first left.
    const [a, b] = await Promise.all([thread.decide(first, pause), thread.decide(second, pause)]);
    assert.deepEqual(a, firstExpected);
    assert.deepEqual(b, secondExpected);
    assert.equal(pauses, 2, 'two pauses between the three parts of the first, none in the second');
  });

  it('a part that cannot be copied fails its decide only; the next snapshot is decided', async () => {
    const thread = await PolicyThread.start({ name: 'fifo', options: { seed: 0 } });
    threads.push(thread);
    const inline = await createSharedPolicy('fifo', { seed: 0 });
    const good = large(600);
    // A function in job 400 (the second part): structured copy refuses it.
    const bad = { ...good, jobs: good.jobs.map((j, k) => (k === 400 ? { ...j, note: () => 0 } : j)) };
    await assert.rejects(
      thread.decide(bad as ClusterSnapshot, async () => {}),
      (e: unknown) => e instanceof Error && e.name === 'DataCloneError',
    );
    assert.deepEqual(await thread.decide(good, async () => {}), inline.decide(good));
  });

  it('a worker that dies while a snapshot is sent fails that decide (no unhandled rejection); the next decide starts a fresh one', async () => {
    const thread = await PolicyThread.start({ name: 'fifo', options: { seed: 0 } });
    threads.push(thread);
    const inline = await createSharedPolicy('fifo', { seed: 0 });
    const s = large(600);
    let killed = false;
    const kill = async (): Promise<void> => {
      if (killed) return;
      killed = true;
      await killWorker(thread);
      await new Promise<void>((done) => setImmediate(done)); // as the controller's turns give way
    };
    await assert.rejects(thread.decide(s, kill), /the policy thread exited/);
    assert.deepEqual(await thread.decide(s), inline.decide(s));
  });

  it('saves its memos after the decides asked before; a thread started from them decides as it did', async () => {
    const thread = await PolicyThread.start({ name: 'goodput', options: { seed: 0 } });
    threads.push(thread);
    assert.equal(await thread.saveMemo(), undefined, 'nothing decided yet: nothing to save');
    const s = snapshot(0);
    const decided = thread.decide(s); // not awaited: the save is answered after it
    const json = await thread.saveMemo();
    const expected = await decided;
    const saved = JSON.parse(json!) as { kinds: Record<string, unknown[]> };
    assert.ok(saved.kinds['typed-goodputs']!.length > 0, 'the goodputs of the decide asked before');
    const restarted = await PolicyThread.start({ name: 'goodput', options: { seed: 0 }, memo: json! });
    threads.push(restarted);
    assert.deepEqual(await restarted.decide(s), expected);
    await killWorker(restarted);
    assert.equal(await restarted.saveMemo(), undefined, 'no worker running: nothing to save');
  });

  it("refuses at start what the policy's creation refuses, with its code", async () => {
    await assert.rejects(
      PolicyThread.start({ name: 'no-such-policy', options: { seed: 0 } }),
      (e: unknown) => e instanceof GoodputError && e.code === 'E_UNKNOWN_POLICY',
    );
  });

  it('a failed decide leaves the worker deciding; after its death the next decide starts a fresh one', async () => {
    const thread = await PolicyThread.start({ name: 'fifo', options: { seed: 0 } });
    threads.push(thread);
    const s = snapshot(0);
    const first = await thread.decide(s);
    // A snapshot the worker cannot decide (no nodes array) throws inside it: a failure, not a death.
    await assert.rejects(thread.decide({ ...s, nodes: undefined as unknown as NodeInfo[] }));
    assert.deepEqual(await thread.decide(s), first, 'still deciding after a failed decide');
    // The worker dies (as of a bug or out of memory): the thread hears of it, then starts afresh.
    await killWorker(thread);
    assert.deepEqual(await thread.decide(s), first, 'a fresh worker after the death');
  });
});
