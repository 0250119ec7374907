/**
 * The default policy (goodput) ranks jobs by the remaining work their trainers report, decided in
 * fake time (FakeBackend and FakeClock, test-support/control/fake-plane.ts): a short job that has
 * already run a while keeps most of the slots when a long job arrives; ranking by attained service
 * would favour the newcomer. The scenario of e2e-remaining.test.ts (which keeps it on a real
 * `goodput up`): six slots for two jobs of at most four replicas each, so the split shows the
 * ranking, 4/2 with the short job first, 2/4 with the long one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePlane, fakeTrainer } from '../../test-support/control/fake-plane.js';

describe('remaining work reaches the default policy (fake backend and clock)', () => {
  it('a short job keeps its head start when a long job arrives', async () => {
    const p = await fakePlane({ slots: 6, interval_s: 1, grace_s: 2 });
    const submit = (name: string, samples: number) =>
      p.submit({ name, command: fakeTrainer({ samples, time_scale: 0.5 }), max_replicas: 4 });
    const short = await submit('short', 400_000);
    await p.waitFor('the short job to run and report its remaining work', 20, async () => {
      const j = await p.job(short.id);
      return j.state === 'running' && j.remaining_samples !== null && j.step > 5 ? true : undefined;
    });
    const long = await submit('long', 50_000_000);
    // Once the long job has reported (a fitted model and its remaining work), it may grow past its
    // first slot; the short job must stay ahead of it.
    await p.waitFor('the long job to report its remaining work', 30, async () => {
      const j = await p.job(long.id);
      return j.state === 'running' && j.remaining_samples !== null && j.perf !== null ? true : undefined;
    });
    const seen: string[] = [];
    const replicas = async () => [await p.job(short.id), await p.job(long.id)] as const;
    const steady = await p.waitFor('the short job to hold most slots', 30, async () => {
      const [s, l] = await replicas();
      seen.push(`${s.allocation.length}/${l.allocation.length}`);
      return s.state === 'running' && l.state === 'running' && s.allocation.length >= 4 && l.allocation.length >= 1
        ? [s, l]
        : undefined;
    });
    assert.ok(steady[0].remaining_samples! < steady[1].remaining_samples!, 'the short job has less work left');
    // It stays so for several scheduling rounds while both run.
    for (let i = 0; i < 6; i++) {
      await p.clock.advance(1000);
      const [s, l] = await replicas();
      if (s.state !== 'running') break;
      seen.push(`${s.allocation.length}/${l.allocation.length}`);
      assert.ok(s.allocation.length > l.allocation.length, `short/long replicas over time: ${seen.join(' ')}`);
    }
    await p.close();
  });
});
