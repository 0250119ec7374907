/**
 * Node-level preference from the device marks (control/ranks/device-health.ts,
 * control/loop/typed-nodes.ts, control/loop/mark-preference.ts) in the controller, on the fake
 * backend and a fake clock: a device of node n0 straggles in two jobs and is marked slow; the next
 * whole-node gang goes to the equal node n1 while it is free, and to n0 when n1 is busy.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeNode } from '../backends/fake-backend.js';
import type { RankSummaryBody } from '../core/rank-wire.js';
import { fakePlain, fakePlane, type FakePlane } from '../../test-support/control/fake-plane.js';
import { policyNames } from '../policy/registry.js';
import type { JobRecord } from '../store/types.js';

const summary = (rank: number, compute_s: number, step: number): RankSummaryBody => ({
  attempt: 0,
  rank,
  window: { steps: 10, data_wait_s: 0.1, compute_s, sync_s: 0.2, between_s: 0, step, phase: 'step', phase_s: 0 },
});

/** Submits a plain job of `replicas` ranks (a gang) and waits until it runs; answers its record. */
async function running(plane: FakePlane, replicas: number): Promise<JobRecord> {
  const job = await plane.submit({
    name: `gang${replicas}`,
    command: fakePlain(3600),
    min_replicas: replicas,
    max_replicas: replicas,
    preemptible: true,
  });
  return plane.waitFor('the job to run', 30, async () => {
    const now = await plane.job(job.id);
    return now.state === 'running' ? now : undefined;
  });
}

/**
 * A whole-node job (4 ranks: Sia's configurations are whole nodes or powers of two) whose rank 1
 * computes 150 ms more per step, until the straggler is named; then cancelled.
 */
async function straggleOnce(plane: FakePlane): Promise<JobRecord> {
  const job = await running(plane, 4);
  let step = 0;
  for (let t = 0; t < 14; t += 2) {
    step += 10;
    for (const rank of [0, 1, 2, 3])
      await plane.controller.rankSummary(job.id, summary(rank, rank === 1 ? 2.0 : 0.5, step));
    await plane.clock.advance(2000);
  }
  assert.equal(plane.controller.rankVerdicts(job.id)?.straggler?.rank, 1);
  // Its devices are free for the scheduler at once; the next job launches once its replicas exited.
  await plane.controller.cancel(job.id, 'test');
  return job;
}

describe('node marks steer the placement of gangs', () => {
  // Sia starts a job that has no throughput measured on 1 device only (profile first), so it never
  // runs these plain gangs; its placement takes whole free nodes in node order (sia/placement.ts),
  // and the pure parts are checked in control/loop/mark-preference.test.ts.
  for (const policy of policyNames().filter((p) => p !== 'sia'))
    it(`${policy}: a gang avoids the node whose device straggled while an equal one is free, else takes it`, async () => {
      const plane = await fakePlane({
        nodes: [fakeNode('n0', 4), fakeNode('n1', 4)],
        policy,
        interval_s: 60,
        grace_s: 5,
      });
      const { store, controller } = plane;
      try {
        // Whole-node jobs whose rank 1 straggles, until one device straggled in two jobs and is marked.
        // Queue-based and goodput placements put them on n0 (the first of equal free nodes), device 1.
        const stragglers: JobRecord[] = [];
        while (controller.deviceMarks().length === 0 && stragglers.length < 8)
          stragglers.push(await straggleOnce(plane));
        const [mark, ...others] = controller.deviceMarks();
        assert.deepEqual([mark?.kind, others], ['slow', []]);
        const events = (await Promise.all(stragglers.map((j) => store.listEvents(j.id)))).flat();
        const said = events.find((e) => e.kind === 'device-marked');
        assert.match(said?.reason ?? '', new RegExp(`device ${mark!.device} of node ${mark!.node}.*slow`));
        // What `goodput nodes` shows: the backend's order, the mark on the node's line.
        const names = controller.inventory().map((n) => n.name);
        assert.deepEqual(names, ['n0', 'n1']);
        const [marked, clean] = mark!.node === 'n0' ? [0, 1] : [1, 0];
        const note = `device ${mark!.device} slow \\(its ranks straggled in 2 jobs\\)`;
        assert.match(controller.inventory()[marked]!.note, new RegExp(note));

        // A whole-node gang goes to the clean node while it is free (the policy's nodes list the marked one last) ...
        const first = await running(plane, 4);
        assert.deepEqual(first.allocation, [clean, clean, clean, clean], `the gang is on ${names[clean]}`);
        assert.deepEqual(
          controller.nodes().map((n) => n.name),
          [names[clean], names[marked]],
        );
        // ... and on the marked node when the clean one is busy: no capacity lost.
        const second = await running(plane, 4);
        assert.deepEqual(second.allocation, [marked, marked, marked, marked]);
        // Reordering between rounds does not move running jobs: clearing the mark restores the order.
        assert.equal(controller.clearDeviceMarks(mark!.node).length, 1);
        await plane.clock.advance(5000);
        assert.deepEqual((await plane.job(first.id)).allocation, [clean, clean, clean, clean]);
        assert.deepEqual([(await plane.job(first.id)).launches, (await plane.job(second.id)).launches], [1, 1]);
      } finally {
        await plane.close();
      }
    });
});
