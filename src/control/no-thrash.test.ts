/**
 * The default policy never thrashes, decided in fake time (FakeBackend and FakeClock,
 * test-support/control/fake-plane.ts): plain jobs (no SDK, no checkpoint) run to the end once
 * started; synthetic SDK jobs of unknown length share 2 slots with a bounded number of restarts,
 * the short ones first. The same scenarios as e2e-no-thrash.test.ts, whose real `goodput up`
 * keeps the kill -9 and restart of the server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultGoodputPolicyParams } from '../policy/goodput/job-view.js';
import type { JobRecord } from '../store/types.js';
import { fakePlain, fakePlane, fakeTrainer, type FakePlane } from '../../test-support/control/fake-plane.js';
import { stopProtection } from './loop/snapshot.js';

const ENDED = ['succeeded', 'failed', 'cancelled'];
const allEnded = (plane: FakePlane, ids: readonly string[], limit_s: number): Promise<JobRecord[]> =>
  plane.waitFor(`jobs ${ids.join(', ')} to end`, limit_s, async () => {
    const jobs = await Promise.all(ids.map((id) => plane.job(id)));
    return jobs.every((j) => ENDED.includes(j.state)) ? jobs : undefined;
  });
const summary = (jobs: readonly JobRecord[]) =>
  jobs.map((j) => `${j.name}: ${j.state}, ${j.launches - 1} restarts (${j.reason})`).join('; ');

describe('no thrashing (fake backend and clock)', () => {
  it('three plain 20 s jobs on 2 slots all succeed without a restart; a running one says why it is kept', async () => {
    const plane = await fakePlane({ slots: 2, interval_s: 2, grace_s: 3 });
    const ids: string[] = [];
    for (const name of ['bar-1', 'bar-2', 'bar-3']) ids.push((await plane.submit({ name, command: fakePlain(20) })).id);
    const running = await plane.waitFor('two jobs to run', 20, async () => {
      const run = (await Promise.all(ids.map((id) => plane.job(id)))).filter((j) => j.state === 'running');
      return run.length === 2 ? run : undefined;
    });
    // Several rounds pass (interval 2 s) while the third job waits: nothing is swapped.
    await plane.clock.advance(5000);
    assert.match(
      stopProtection(await plane.job(running[0]!.id)) ?? '',
      /not preempted or resized: no checkpoint yet.*set preemptible: true to allow/,
    );
    const jobs = await allEnded(plane, ids, 120);
    assert.ok(
      jobs.every((j) => j.state === 'succeeded' && j.launches === 1),
      summary(jobs),
    );
    await plane.close();
  });

  it('eight SDK jobs of unknown length on 2 slots: all succeed, restarts within the bound, short ones first', async () => {
    // Queues and slices at the scale of these seconds-long jobs.
    const params = ['restart_delay_s=1', 'queue_base_gpu_s=4', 'min_slice_restarts=3'];
    const plane = await fakePlane({ slots: 2, interval_s: 1, grace_s: 3, params });
    // Long (~20 s alone) and short (~2 s) jobs, interleaved in submission order.
    const lengths = [25_000, 2_500, 25_000, 2_500, 25_000, 2_500, 25_000, 2_500];
    const ids: string[] = [];
    for (const [i, samples] of lengths.entries()) {
      ids.push((await plane.submit({ name: `sdk-${i}`, command: fakeTrainer({ samples, unknown_length: true }) })).id);
    }
    const jobs = await allEnded(plane, ids, 400);
    assert.ok(
      jobs.every((j) => j.state === 'succeeded'),
      summary(jobs),
    );
    for (const j of jobs)
      assert.ok((await plane.store.listReports(j.id, 1)).length > 0, `${j.name} reported in-process`);
    for (const j of jobs) assert.ok(j.launches - 1 <= defaultGoodputPolicyParams.max_preemptions, summary(jobs));
    const short = jobs.filter((_, i) => lengths[i] === 2_500);
    const long = jobs.filter((_, i) => lengths[i] === 25_000);
    assert.ok(
      Math.max(...short.map((j) => j.finished_at_ms!)) < Math.min(...long.map((j) => j.finished_at_ms!)),
      `short jobs finish before every long one: ${summary(jobs)}`,
    );
    await plane.close();
  });
});
