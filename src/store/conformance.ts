/**
 * The conformance suite every `Store` implementation must pass. Each case gets a fresh store
 * from `open` (its own namespace/database) and a controllable clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { historyConformance } from './conformance-history.js';
import { profileConformance } from './conformance-profiles.js';
import { reportBatch } from './report-batch.js';
import type { ReportsAdded, Store } from './store.js';
import type { JobSpec } from './types.js';

/** A fresh store using the given clock (epoch ms). */
export type OpenStore = (now_ms: () => number) => Promise<Store>;

const spec: JobSpec = {
  name: 'mnist',
  command: ['python', 'train.py', '--lr', '0.1'],
  workdir: '/tmp',
  env: { A: '1' },
  min_replicas: 0,
  max_replicas: 4,
  max_restarts: 2,
  preemptible: true,
  priority: 0,
};

function isCode(code: string) {
  return (error: unknown) => error instanceof GoodputError && error.code === code;
}

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
      assert.equal(await s.recordReplicaExit('j', 0, 0, 143, 'backend'), true);
      assert.equal(await s.recordReplicaExit('j', 0, 0, 1, 'backend'), false, 'second exit record is ignored');
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

    it('stores reports, aggregates the profile per configuration and keeps the latest stats', async () => {
      const s = await fresh();
      const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      const limits = {
        init_batch_size: 128,
        max_batch_size: 4096,
        min_local_bsz: 32,
        max_local_bsz: 1024,
        accumulation: true,
      };
      const m = {
        time_s: 1,
        num_nodes: 1,
        num_replicas: 2,
        local_bsz: 64,
        accum_steps: 0,
        sync_time_s: 0.05,
        grad_sqr: 0.5,
        grad_var: 1.5,
      };
      let added = await s.addReports(
        reportBatch('j', 0, limits, [
          { ...m, step: 1, step_time_s: 0.25, samples: 128 },
          { ...m, step: 2, step_time_s: 0.35, samples: 256, grad_sqr: null, grad_var: null },
        ]),
      );
      assert.equal(added.new_configuration, true);
      assert.equal(added.job.step, 2);
      assert.equal(added.job.samples, 256);
      assert.deepEqual(added.job.grad, { sqr: 0.5, var: 1.5 });
      assert.deepEqual(added.job.limits, limits);
      added = await s.addReports(
        reportBatch('j', 0, undefined, [{ ...m, step: 3, step_time_s: 0.3, accum_steps: 1, samples: 512 }]),
      );
      assert.equal(added.new_configuration, false);
      assert.deepEqual(added.job.limits, limits, 'limits kept when omitted');
      const [row] = await s.getProfile('j');
      assert.equal(row!.count, 3);
      // accum = (step - sync) / (a + 1): 0.2, 0.3, 0.125 -> mean 0.208333; optim = step - a * accum: 0.25, 0.35, 0.175
      assert.ok(Math.abs(row!.accum_step_time_s - 0.625 / 3) < 1e-12);
      assert.ok(Math.abs(row!.optim_step_time_s - 0.775 / 3) < 1e-12);
      assert.deepEqual(
        (await s.listReports('j')).map((r) => r.step),
        [1, 2, 3],
      );
      assert.deepEqual(
        (await s.listReports('j', 2)).map((r) => r.step),
        [2, 3],
      );
      await assert.rejects(
        s.addReports(reportBatch('nope', 0, undefined, [{ ...m, step: 1, step_time_s: 1 }])),
        isCode('E_NOT_FOUND'),
      );
      const batch = await s.addReportBatches([
        reportBatch('nope', 0, undefined, [{ ...m, step: 9, step_time_s: 1 }]),
        reportBatch('j', 0, undefined, [{ ...m, step: 4, step_time_s: 0.3, num_replicas: 3 }]),
      ]);
      assert.ok(isCode('E_NOT_FOUND')(batch[0]), 'an unknown job is an error value');
      assert.equal((batch[1] as { job: { step: number } }).job.step, 4, 'and does not affect other batches');
      assert.equal((batch[1] as { new_configuration: boolean }).new_configuration, true);
      assert.equal((await s.listReports('j')).length, 4);
      const perf = {
        alpha_c: 0.1,
        beta_c: 0.01,
        alpha_n: 1e-8,
        beta_n: 1e-8,
        alpha_r: 0.01,
        beta_r: 0.001,
        gamma: 1.5,
      };
      const correction = {
        compute: [{ local_bsz: 32, factor: 1.1 }],
        shapes: [{ num_nodes: 1, num_replicas: 3, by_batch: [{ local_bsz: 32, factor: 0.8 }] }],
      };
      assert.equal(created.correction, null, 'no correction before the first fit');
      assert.equal(await s.saveRefit({ job_id: 'j', perf, correction }), undefined, 'no profile without one');
      assert.equal((await s.getJob('j'))!.perf!.gamma, 1.5);
      assert.deepEqual((await s.getJob('j'))!.correction, correction, 'the correction is kept with the fit');
      await s.saveRefit({ job_id: 'j', perf, correction: null });
      assert.equal((await s.getJob('j'))!.correction, null, 'and replaced with it');
      await s.close();
    });

    it('keeps the remaining samples of the newest report entry that has them', async () => {
      const s = await fresh();
      const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      assert.equal(created.remaining_samples, null, 'unknown until reported');
      const m = {
        time_s: 1,
        num_nodes: 1,
        num_replicas: 1,
        local_bsz: 32,
        accum_steps: 0,
        step_time_s: 0.1,
        sync_time_s: 0,
      };
      let added = await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 1 }]));
      assert.equal(added.job.remaining_samples, null, 'entries without it leave it unknown');
      added = await s.addReports(
        reportBatch('j', 0, undefined, [
          { ...m, step: 2, remaining_samples: 1000.5 },
          { ...m, step: 3, remaining_samples: 968 },
          { ...m, step: 4 },
        ]),
      );
      assert.equal(added.job.remaining_samples, 968, 'newest entry that has it');
      assert.equal((await s.getJob('j'))!.remaining_samples, 968, 'persisted');
      await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 5, remaining_samples: null }]));
      assert.equal((await s.getJob('j'))!.remaining_samples, 968, 'null (unknown) keeps the last known value');
      await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 6, remaining_samples: 0 }]));
      assert.equal((await s.getJob('j'))!.remaining_samples, 0, 'zero is a value');
      assert.deepEqual(
        (await s.listReports('j')).map((r) => r.remaining_samples),
        [undefined, 1000.5, 968, undefined, null, 0],
      );
      await s.close();
    });

    it('keeps what a preemption would cost: the newest checkpoint, whether the job checkpoints when stopped, the largest measured size', async () => {
      const s = await fresh();
      const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      assert.deepEqual(
        [created.checkpoint_at_ms, created.checkpoint_on_stop, created.max_profiled_replicas],
        [null, false, 0],
      );
      const m = {
        time_s: 1,
        num_nodes: 1,
        num_replicas: 2,
        local_bsz: 32,
        accum_steps: 0,
        step_time_s: 0.1,
        sync_time_s: 0,
      };
      let added = await s.addReports(
        reportBatch('j', 0, undefined, [
          { ...m, step: 1, checkpoint_time_s: 1000.25 },
          { ...m, step: 2, num_replicas: 1 },
        ]),
      );
      assert.deepEqual(
        [added.job.checkpoint_at_ms, added.job.checkpoint_on_stop, added.job.max_profiled_replicas],
        [1_000_250, false, 2],
      );
      [added] = (await s.addReportBatches([
        { ...reportBatch('j', 0, undefined, [{ ...m, step: 3, checkpoint_time_s: null }]), checkpoint_on_stop: true },
      ])) as [ReportsAdded];
      assert.deepEqual(
        [added.job.checkpoint_at_ms, added.job.checkpoint_on_stop],
        [1_000_250, true],
        'null keeps the last checkpoint',
      );
      const job = (await s.getJob('j'))!;
      assert.deepEqual(
        [job.checkpoint_at_ms, job.checkpoint_on_stop, job.max_profiled_replicas],
        [1_000_250, true, 2],
        'persisted',
      );
      await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 4 }]));
      assert.equal((await s.getJob('j'))!.checkpoint_on_stop, true, 'a batch without the flag leaves it');
    });

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
        await s.launchJob(
          'j',
          [
            {
              rank: 0,
              device: 0,
              node: 'local',
              launch_id: '',
              pid: 1,
              proc_start: '',
              log_path: '',
              started_at_ms: 0,
            },
          ],
          'b',
          'r',
        );
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

    it('refuses (E_CONFLICT, changing nothing) reports for a job that has ended; keeps the newest step time', async () => {
      const s = await fresh();
      await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
      const m = { time_s: 1, num_nodes: 1, num_replicas: 1, local_bsz: 32, accum_steps: 0, sync_time_s: 0 };
      const added = await s.addReports(
        reportBatch('j', 0, undefined, [
          { ...m, step: 1, step_time_s: 0.5 },
          { ...m, step: 2, step_time_s: 0.25 },
        ]),
      );
      assert.equal(added.job.last_step_time_s, 0.25);
      assert.equal((await s.getJob('j'))!.last_step_time_s, 0.25);
      // A batch invalid for the stored job (core/report-issues.ts: more replicas than its spec allows).
      const [refused, other] = await s.addReportBatches([
        reportBatch('j', 0, undefined, [{ ...m, num_replicas: spec.max_replicas + 1, step: 5, step_time_s: 1 }]),
        reportBatch('j', 0, undefined, [{ ...m, step: 6, step_time_s: 0.25 }]),
      ]);
      assert.ok(isCode('E_BAD_REQUEST')(refused), 'an invalid batch is refused');
      assert.match((refused as Error).message, /max_replicas/);
      assert.equal((other as { job: { step: number } }).job.step, 6, 'and no other');
      assert.deepEqual(
        (await s.listReports('j')).map((r) => r.step),
        [1, 2, 6],
        'nothing of the refused batch stored',
      );
      await s.finishJob('j', 'cancelled', 'u', 'cancelled by u');
      const before = await s.getJob('j');
      await assert.rejects(
        s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 3, step_time_s: 9 }])),
        isCode('E_CONFLICT'),
      );
      const [result] = await s.addReportBatches([reportBatch('j', 0, undefined, [{ ...m, step: 4, step_time_s: 9 }])]);
      assert.ok(isCode('E_CONFLICT')(result));
      assert.deepEqual(await s.getJob('j'), before);
      assert.equal((await s.listReports('j')).length, 3);
      assert.equal((await s.getProfile('j'))[0]!.count, 3);
      await s.close();
    });

    it('stores tokens by hash', async () => {
      const s = await fresh();
      await s.putToken({ hash: 'h1', user: 'alice', admin: false, created_at_ms: 5 });
      await s.putToken({ hash: 'h1', user: 'mallory', admin: true, created_at_ms: 6 });
      assert.deepEqual(await s.findToken('h1'), { hash: 'h1', user: 'alice', admin: false, created_at_ms: 5 });
      assert.equal(await s.findToken('h2'), undefined);
      await s.close();
    });

    it('lists, expires and revokes tokens; revoking twice changes nothing', async () => {
      const s = await fresh();
      await s.putToken({ hash: 'h1', user: 'alice', admin: false, created_at_ms: 5, expires_at_ms: 100 });
      await s.putToken({ hash: 'h2', user: 'bob', admin: false, created_at_ms: 6 });
      assert.deepEqual(
        (await s.listTokens()).map((t) => t.hash),
        ['h1', 'h2'],
      );
      assert.deepEqual(
        (await s.listTokens('alice')).map((t) => [t.hash, t.expires_at_ms]),
        [['h1', 100]],
      );
      assert.equal(await s.revokeToken('h2', 50), true);
      assert.equal(await s.revokeToken('h2', 60), false);
      assert.equal(await s.revokeToken('nope', 60), false);
      assert.equal((await s.findToken('h2'))!.revoked_at_ms, 50);
      await s.close();
    });

    profileConformance(fresh, (ms) => (clock += ms));
    historyConformance(fresh, (ms) => (clock += ms));

    it('maps users to Unix accounts', async () => {
      const s = await fresh();
      assert.equal(await s.getUnixUser('alice'), undefined);
      await s.setUnixUser('alice', 'al');
      await s.setUnixUser('alice', 'alice2');
      assert.equal(await s.getUnixUser('alice'), 'alice2');
      await s.close();
    });
  });
}
