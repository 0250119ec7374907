/**
 * The verdicts across ranks acted on by the controller (control/ranks/rank-watch.ts), on the fake
 * backend and a fake clock: rank summaries posted as the SDK posts them, a straggler named in an
 * event, a silent rank named hung within a minute, its job stopped at once (not after the 300 s
 * job-level timeout) and relaunched without its device, which stays drained until cleared.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeNode } from '../backends/fake-backend.js';
import type { RankSummaryBody } from '../core/rank-wire.js';
import { fakePlain, fakePlane, type FakePlane } from '../../test-support/control/fake-plane.js';
import type { JobRecord } from '../store/types.js';

const summary = (attempt: number, rank: number, compute_s: number, step: number, steps = 10): RankSummaryBody => ({
  attempt,
  rank,
  window: {
    steps,
    data_wait_s: 0.01 * steps,
    compute_s,
    sync_s: 0.02 * steps,
    between_s: 0,
    step,
    phase: 'step',
    phase_s: 0,
  },
});

/** A 3-rank plain job of an hour, submitted on `plane` and running. */
async function runningRanksJob(plane: FakePlane): Promise<JobRecord> {
  const job = await plane.submit({
    name: 'ranks',
    command: fakePlain(3600),
    min_replicas: 3,
    max_replicas: 3,
    max_restarts: 3,
    preemptible: true,
  });
  await plane.clock.until(async () => (await plane.store.getJob(job.id))!.state === 'running', 10_000);
  return job;
}

/** Ranks 0 and 1 post heartbeats at `step` (no progress), rank 2 is silent, until a rank-hung event. */
async function untilHung(plane: FakePlane, job_id: string, step: number): Promise<void> {
  await plane.clock.until(
    async () => {
      for (const rank of [0, 1])
        await plane.controller.rankSummary(job_id, summary(0, rank, 0, step, 0)).catch(() => undefined);
      return (await plane.store.listEvents(job_id)).some((e) => e.kind === 'rank-hung');
    },
    60_000,
    2000,
  );
}

describe('verdicts across ranks in the controller', () => {
  it('names a straggler, then a hung rank, and restarts the job without its device', async () => {
    const plane = await fakePlane({ nodes: [fakeNode('n0', 4)], policy: 'fifo', interval_s: 60, grace_s: 5 });
    const { clock, store, controller } = plane;
    try {
      const job = await runningRanksJob(plane);
      const running = (await store.getJob(job.id))!;
      assert.deepEqual(running.devices, [0, 1, 2]);
      // 14 s of summaries every 2 s: rank 1 computes 150 ms more per step (10 steps per summary).
      let step = 0;
      for (let t = 0; t < 14; t += 2) {
        step += 10;
        for (const rank of [0, 1, 2])
          await controller.rankSummary(job.id, summary(0, rank, rank === 1 ? 2.0 : 0.5, step));
        await clock.advance(2000);
      }
      const straggler = controller.rankVerdicts(job.id)?.straggler;
      assert.equal(straggler?.rank, 1);
      assert.equal(straggler?.device, 1);
      assert.ok(
        (await store.listEvents(job.id)).some(
          (e) => e.kind === 'straggler' && /rank 1 \(node n0, device 1\)/.test(e.reason),
        ),
      );

      // Rank 2 goes silent; ranks 0 and 1 keep posting heartbeats without progress.
      const stopped = clock.now_ms();
      await untilHung(plane, job.id, step);
      const hung = (await store.listEvents(job.id)).find((e) => e.kind === 'rank-hung')!;
      assert.ok(clock.now_ms() - stopped <= 60_000);
      assert.equal(hung.data.rank, 2);
      assert.match(
        hung.reason,
        /hung: rank 2 \(node n0, device 2\) has sent nothing .* without device 2 of node n0 \(drained\)/,
      );
      assert.deepEqual(
        controller.deviceMarks().map((m) => [m.device, m.kind]),
        [[2, 'drained']],
      );
      await clock.until(
        async () => (await store.getJob(job.id))!.launches === 2 && (await store.getJob(job.id))!.state === 'running',
        60_000,
      );
      assert.deepEqual((await store.getJob(job.id))!.devices, [0, 1, 3], 'relaunched without the drained device');
      assert.equal(controller.clearDeviceMarks('n0', 2).length, 1);
      assert.deepEqual(controller.deviceMarks(), []);
      await assert.rejects(controller.rankSummary(job.id, summary(0, 0, 0.5, step)), /does not run attempt 0/);
    } finally {
      await plane.close();
    }
  });

  it('drains the whole node where the backend picks the devices within a node, and requeues the job off it', async () => {
    // As the Slurm backend says of itself: Slurm, not Goodput, picks the GPUs within a node.
    const plane = await fakePlane({
      nodes: [fakeNode('n0', 4), fakeNode('n1', 4)],
      policy: 'fifo',
      interval_s: 60,
      grace_s: 5,
      hangDrains: 'node',
    });
    const { clock, store, controller, cluster } = plane;
    try {
      const job = await runningRanksJob(plane);
      const first = (await store.getJob(job.id))!;
      const node = first.allocation[0]!;
      assert.deepEqual(first.allocation, [node, node, node]);
      let step = 0;
      for (let t = 0; t < 6; t += 2) {
        step += 10;
        for (const rank of [0, 1, 2]) await controller.rankSummary(job.id, summary(0, rank, 0.5, step));
        await clock.advance(2000);
      }
      await untilHung(plane, job.id, step);
      const name = cluster.nodes[node]!.name;
      const hung = (await store.listEvents(job.id)).find((e) => e.kind === 'rank-hung')!;
      assert.match(hung.reason, new RegExp(`without node ${name} \\(drained`));
      assert.deepEqual(
        controller
          .deviceMarks()
          .map((m) => [m.node, m.device, m.kind])
          .sort((a, b) => Number(a[1]) - Number(b[1])),
        [0, 1, 2, 3].map((d) => [name, d, 'drained']),
      );
      const mark = (await store.listEvents(job.id)).find((e) => e.kind === 'device-marked')!;
      assert.deepEqual([mark.data.node, mark.data.device], [name, null]);
      await clock.until(
        async () => (await store.getJob(job.id))!.launches === 2 && (await store.getJob(job.id))!.state === 'running',
        60_000,
      );
      // Without the requeue, fifo keeps the job's allocation on the drained node.
      assert.deepEqual((await store.getJob(job.id))!.allocation, [1 - node, 1 - node, 1 - node]);
      assert.equal(controller.clearDeviceMarks(name).length, 4);
    } finally {
      await plane.close();
    }
  });
});
