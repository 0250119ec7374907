/**
 * The conformance suite every `Store` implementation must pass. Each case gets a fresh store
 * from `open` (its own namespace/database) and a controllable clock. This file holds the job
 * lifecycle cases and registers the other parts (reports, tokens, key profiles, history).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { historyConformance } from './conformance-history.js';
import { profileConformance } from './conformance-profiles.js';
import { reportConformance } from './conformance-reports.js';
import { conformanceSpec as spec, isCode } from './conformance-shared.js';
import { replicaFixture } from './job-fixture.js';
import { tokenConformance } from './conformance-tokens.js';
import type { Store } from './store.js';

/** A fresh store using the given clock (epoch ms). */
export type OpenStore = (now_ms: () => number) => Promise<Store>;

/** Registers the suite under `describe(name)`. */
export function storeConformance(name: string, open: OpenStore): void {
  describe(`Store conformance: ${name}`, () => {
    let clock = 1_000_000;
    const now = () => clock;
    const fresh = async () => {
      clock = 1_000_000;
      return open(now);
    };

    it('creates, reads and lists jobs in submission order with a submitted event', async () => {
      const s = await fresh();
      const a = await s.createJob({ id: 'a', name: 'one', user: 'alice', spec }, 'alice');
      clock += 5;
      await s.createJob({ id: 'b', name: 'two', user: 'bob', spec: { ...spec, name: 'two' } }, 'bob');
      assert.equal(a.state, 'queued');
      assert.equal(await s.getJobState('a'), 'queued');
      assert.equal(await s.getJobState('nope'), undefined);
      assert.equal(a.submitted_at_ms, 1_000_000);
      assert.deepEqual(a.spec, spec);
      assert.deepEqual(
        (await s.listJobs()).map((j) => j.id),
        ['a', 'b'],
      );
      assert.deepEqual(
        (await s.listJobs({ user: 'bob' })).map((j) => j.id),
        ['b'],
      );
      assert.deepEqual(
        (await s.listJobs({ states: ['running'] })).map((j) => j.id),
        [],
      );
      assert.equal(await s.getJob('zzz'), undefined);
      await assert.rejects(s.createJob({ id: 'a', name: 'x', user: 'alice', spec }, 'alice'), isCode('E_CONFLICT'));
      const events = await s.listEvents('a');
      assert.deepEqual(
        events.map((e) => [e.kind, e.from_state, e.to_state, e.actor]),
        [['submitted', null, 'queued', 'alice']],
      );
      await s.close();
    });

    it('walks the lifecycle: assign, launch, rescale, relaunch, finish; each step one event', async () => {
      const s = await fresh();
      await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      let job = await s.assignJob('j', { allocation: [0], devices: [2] }, 0, 'scheduler', 'pollux: 1 replica');
      assert.equal(job.state, 'starting');
      assert.deepEqual(job.devices, [2]);
      clock += 1000;
      job = await s.launchJob(
        'j',
        [
          {
            rank: 0,
            device: 2,
            node: 'local',
            launch_id: '',
            pid: 4242,
            proc_start: '77',
            log_path: '/l',
            started_at_ms: clock,
          },
        ],
        'backend',
        'launched',
      );
      assert.equal(job.state, 'running');
      assert.equal(job.launches, 1);
      assert.equal(job.started_at_ms, clock);
      assert.equal(job.max_profiled_replicas, 0, 'a size counts as profiled once measured, not when launched');
      assert.deepEqual(
        (await s.listLiveReplicas()).map((r) => [r.job_id, r.attempt, r.rank, r.node, r.pid]),
        [['j', 0, 0, 'local', 4242]],
      );
      clock += 10_000;
      job = await s.stopJob('j', { allocation: [0, 0], devices: [2, 3] }, 'rescale', 'scheduler', 'grow to 2');
      assert.equal(job.state, 'rescaling');
      assert.equal(job.attained_service_gpu_s, 10);
      assert.equal(job.stop_requested_at_ms, clock);
      assert.equal(await s.recordReplicaExit({ job_id: 'j', attempt: 0, rank: 0, exit_code: 143 }, 'backend'), true);
      assert.equal(
        await s.recordReplicaExit({ job_id: 'j', attempt: 0, rank: 0, exit_code: 1 }, 'backend'),
        false,
        'second exit record is ignored',
      );
      assert.equal((await s.listReplicas('j', 0))[0]!.exit_code, 143);
      job = await s.relaunchJob('j', 0, 'controller', 'checkpointed');
      assert.equal(job.state, 'starting');
      job = await s.launchJob(
        'j',
        [0, 1].map((rank) => ({
          rank,
          device: 2 + rank,
          node: `n${rank}`,
          launch_id: '77',
          pid: 0,
          proc_start: '',
          log_path: '/l',
          started_at_ms: clock,
        })),
        'backend',
        'launched',
      );
      assert.equal(job.launches, 2);
      assert.equal(job.max_profiled_replicas, 0);
      assert.deepEqual(
        (await s.listReplicas('j', 1)).map((r) => [r.node, r.launch_id]),
        [
          ['n0', '77'],
          ['n1', '77'],
        ],
        'multi-node replicas keep their node and launch id',
      );
      await s.recordEvent('j', 'node-unavailable', 'backend', 'node n1 drained', {});
      clock += 3000;
      job = await s.finishJob('j', 'succeeded', 'backend', 'all replicas exited 0');
      assert.equal(job.state, 'succeeded');
      assert.equal(job.finished_at_ms, clock);
      assert.equal(job.attained_service_gpu_s, 16);
      assert.deepEqual(job.allocation, []);
      const kinds = (await s.listEvents('j')).map((e) => `${e.kind}:${e.from_state}->${e.to_state}`);
      assert.deepEqual(kinds, [
        'submitted:null->queued',
        'assigned:queued->starting',
        'launched:starting->running',
        'rescale:running->rescaling',
        'replica-exited:rescaling->rescaling',
        'relaunch:rescaling->starting',
        'launched:starting->running',
        'node-unavailable:running->running',
        'succeeded:running->succeeded',
      ]);
      await s.close();
    });

    it('lists the live replicas of given jobs or on given nodes, as listLiveReplicas orders them', async () => {
      const s = await fresh();
      // a on node n1 (2 ranks), b on n2, c on n1 then ended: its replica is not live.
      for (const [id, node, ranks] of [
        ['a', 'n1', 2],
        ['b', 'n2', 1],
        ['c', 'n1', 1],
      ] as const) {
        await s.createJob({ id, name: id, user: 'u', spec }, 'u');
        const devices = Array.from({ length: ranks }, (_, k) => k);
        await s.assignJob(id, { allocation: devices.map(() => 0), devices }, 0, 'scheduler', 'placed');
        const replicas = devices.map((rank) => ({
          rank,
          device: rank,
          node,
          launch_id: '',
          pid: 100 + rank,
          proc_start: '1',
          log_path: '/l',
          started_at_ms: clock,
        }));
        await s.launchJob(id, replicas, 'backend', 'launched');
      }
      await s.recordReplicaExit({ job_id: 'c', attempt: 0, rank: 0, exit_code: 0 }, 'backend');
      const ids = (rs: readonly { job_id: string; rank: number }[]) => rs.map((r) => `${r.job_id}/${r.rank}`);
      assert.deepEqual(ids(await s.listLiveReplicasFor(['b'], [])), ['b/0']);
      assert.deepEqual(ids(await s.listLiveReplicasFor([], ['n1'])), ['a/0', 'a/1'], 'c ended: not live');
      assert.deepEqual(ids(await s.listLiveReplicasFor(['b'], ['n1'])), ['a/0', 'a/1', 'b/0']);
      assert.deepEqual(ids(await s.listLiveReplicasFor(['a', 'c'], ['n9'])), ['a/0', 'a/1']);
      assert.deepEqual(ids(await s.listLiveReplicasFor(['a'], ['n1'])), ['a/0', 'a/1'], 'by job and by node: once');
      assert.deepEqual(await s.listLiveReplicasFor([], []), []);
      assert.deepEqual(
        await s.listLiveReplicasFor(['a', 'b'], ['n1', 'n2']),
        await s.listLiveReplicas(),
        'everything asked for: the same rows as listLiveReplicas',
      );
      // A page at a time, after a replica (keyset): a/0 a/1 | b/0 (c's ended).
      assert.deepEqual(ids(await s.listLiveReplicas({ limit: 2 })), ['a/0', 'a/1']);
      assert.deepEqual(ids(await s.listLiveReplicas({ limit: 2, after: { job_id: 'a', attempt: 0, rank: 1 } })), [
        'b/0',
      ]);
      assert.deepEqual(ids(await s.listLiveReplicas({ limit: 9, after: { job_id: 'a', attempt: 0, rank: 0 } })), [
        'a/1',
        'b/0',
      ]);
      assert.deepEqual(await s.listLiveReplicas({ limit: 9, after: { job_id: 'b', attempt: 0, rank: 0 } }), []);
      await s.close();
    });

    it('lists the replicas of given jobs live at or after a time, every attempt', async () => {
      const s = await fresh();
      const replicas = (ranks: number) =>
        Array.from({ length: ranks }, (_, rank) => ({
          rank,
          device: rank,
          node: 'n1',
          launch_id: '',
          pid: 100 + rank,
          proc_start: '1',
          log_path: '/l',
          started_at_ms: clock,
        }));
      const placement = (ranks: number) => ({
        allocation: Array(ranks).fill(0),
        devices: replicas(ranks).map((r) => r.device),
      });
      for (const id of ['a', 'b', 'c']) {
        await s.createJob({ id, name: id, user: 'u', spec }, 'u');
        await s.assignJob(id, placement(id === 'a' ? 2 : 1), 0, 'scheduler', 'placed');
        await s.launchJob(id, replicas(id === 'a' ? 2 : 1), 'backend', 'launched');
      }
      // a's attempt 0 (2 ranks) exits at 1,000,100 and attempt 1 (1 rank) runs; b ends at 1,000,200; c runs.
      clock = 1_000_100;
      await s.stopJob('a', placement(1), 'rescale', 'scheduler', 'shrink to 1');
      for (const rank of [0, 1])
        await s.recordReplicaExit({ job_id: 'a', attempt: 0, rank, exit_code: 143 }, 'backend');
      await s.relaunchJob('a', 0, 'controller', 'checkpointed');
      await s.launchJob('a', replicas(1), 'backend', 'launched');
      clock = 1_000_200;
      await s.recordReplicaExit({ job_id: 'b', attempt: 0, rank: 0, exit_code: 0 }, 'backend');
      const ids = (rs: readonly { job_id: string; attempt: number; rank: number }[]) =>
        rs.map((r) => `${r.job_id}/${r.attempt}/${r.rank}`);
      assert.deepEqual(ids(await s.listReplicasSince(['c', 'b', 'a'], 1_000_100)), [
        'a/0/0',
        'a/0/1',
        'a/1/0',
        'b/0/0',
        'c/0/0',
      ]);
      assert.deepEqual(ids(await s.listReplicasSince(['a', 'b', 'c'], 1_000_101)), ['a/1/0', 'b/0/0', 'c/0/0']);
      assert.deepEqual(ids(await s.listReplicasSince(['a', 'b'], 1_000_201)), ['a/1/0']);
      assert.deepEqual(ids(await s.listReplicasSince(['b', 'nope'], 0)), ['b/0/0']);
      assert.deepEqual(await s.listReplicasSince([], 0), []);
      await s.close();
    });

    it('refuses transitions from the wrong state and changes nothing', async () => {
      const s = await fresh();
      await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      await assert.rejects(s.launchJob('j', [], 'x', 'y'), isCode('E_CONFLICT'));
      await assert.rejects(s.stopJob('j', { allocation: [], devices: [] }, 'rescale', 'x', 'y'), isCode('E_CONFLICT'));
      await assert.rejects(s.relaunchJob('j', 0, 'x', 'y'), isCode('E_CONFLICT'));
      await assert.rejects(s.assignJob('nope', { allocation: [0], devices: [0] }, 0, 'x', 'y'), isCode('E_NOT_FOUND'));
      await s.finishJob('j', 'cancelled', 'u', 'cancelled by u');
      await assert.rejects(s.finishJob('j', 'succeeded', 'x', 'y'), isCode('E_CONFLICT'));
      await assert.rejects(s.assignJob('j', { allocation: [0], devices: [0] }, 0, 'x', 'y'), isCode('E_CONFLICT'));
      const job = await s.getJob('j');
      assert.equal(job!.state, 'cancelled');
      assert.equal((await s.listEvents('j')).length, 2);
      await s.close();
    });

    it('requeues to queued before the first launch and to preempted after', async () => {
      const s = await fresh();
      await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      await s.assignJob('j', { allocation: [0], devices: [0] }, 0, 's', 'r');
      assert.equal((await s.requeueJob('j', 's', 'devices taken')).state, 'queued');
      await s.assignJob('j', { allocation: [0], devices: [0] }, 0, 's', 'r');
      await s.launchJob(
        'j',
        [{ rank: 0, device: 0, node: 'local', launch_id: '', pid: 1, proc_start: '', log_path: '', started_at_ms: 0 }],
        'b',
        'r',
      );
      await s.stopJob('j', { allocation: [], devices: [] }, 'failure', 's', 'replica failed');
      const job = await s.requeueJob('j', 's', 'no devices');
      assert.equal(job.state, 'preempted');
      assert.equal(job.failures, 1);
      assert.deepEqual(job.allocation, []);
      await s.close();
    });

    reportConformance(fresh);

    it('records an event without a transition, in the current state; unknown job: E_NOT_FOUND', async () => {
      const s = await fresh();
      await s.createJob({ id: 'j', name: 'mnist', user: 'alice', spec }, 'alice');
      clock += 5;
      await s.recordEvent('j', 'batch-size', 'scheduler', 'batch size grew 32 -> 64', { to: 64 });
      const events = await s.listEvents('j');
      assert.deepEqual(events.map((e) => [e.kind, e.from_state, e.to_state, e.reason, e.at_ms, e.data]).slice(1), [
        ['batch-size', 'queued', 'queued', 'batch size grew 32 -> 64', 1_000_005, { to: 64 }],
      ]);
      assert.equal((await s.getJob('j'))!.state, 'queued');
      await assert.rejects(s.recordEvent('nope', 'batch-size', 'scheduler', 'x', {}), isCode('E_NOT_FOUND'));
      await s.close();
    });

    it('records why replicas stopped, the last failure and a hang; clears the stop kind on relaunch', async () => {
      const s = await fresh();
      await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      const launch = async () => {
        await s.assignJob('j', { allocation: [0], devices: [0] }, 0, 's', 'r');
        await s.launchJob('j', [replicaFixture(0)], 'b', 'r');
      };
      await launch();
      const failure = { attempt: 0, rank: 0, exit_code: 127, early: true };
      let job = await s.stopJob('j', { allocation: [0], devices: [0] }, 'failure', 'c', 'replica 0 failed', {
        failure,
        data: { log_tail: 'not found' },
      });
      assert.equal(job.stop_kind, 'failure');
      assert.deepEqual(job.last_failure, failure);
      assert.equal(job.failures, 1);
      assert.equal(job.health, null);
      job = await s.relaunchJob('j', 0, 'c', 'restart');
      assert.equal(job.stop_kind, null);
      assert.deepEqual(job.last_failure, failure, 'kept to recognise a repeat');
      await s.launchJob(
        'j',
        [{ rank: 0, device: 0, node: 'local', launch_id: '', pid: 2, proc_start: '', log_path: '', started_at_ms: 0 }],
        'b',
        'r',
      );
      job = await s.stopJob('j', { allocation: [0], devices: [0] }, 'hung', 'c', 'hung: no report for 400s');
      assert.equal(job.stop_kind, 'hung');
      assert.equal(job.failures, 2, 'a hang counts as a failure');
      assert.equal(job.health, 'hung: no report for 400s');
      job = await s.finishJob('j', 'failed', 'c', 'gave up', {
        failure: { ...failure, attempt: 1 },
        data: { log_tail: 'x' },
      });
      assert.equal(job.stop_kind, null);
      assert.equal(job.last_failure!.attempt, 1);
      assert.equal(job.failures, 3, 'the failure that ended it counts');
      const events = await s.listEvents('j');
      assert.deepEqual(
        events
          .filter((e) => e.kind === 'failed-replica' || e.kind === 'hung' || e.kind === 'failed')
          .map((e) => e.kind),
        ['failed-replica', 'hung', 'failed'],
      );
      assert.equal(events.find((e) => e.kind === 'failed-replica')!.data.log_tail, 'not found');
      assert.equal(events[events.length - 1]!.data.log_tail, 'x');
      await s.close();
    });

    tokenConformance(fresh);
    profileConformance(fresh, (ms) => (clock += ms));
    historyConformance(fresh, (ms) => (clock += ms));
  });
}
