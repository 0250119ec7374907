/**
 * No growth before evidence, decided in fake time (FakeBackend and FakeClock,
 * test-support/control/fake-plane.ts): a job is grown only after its first throughput
 * measurement, and a growth that measured slower is undone at once: with 60 s rounds, only the
 * round a new measurement triggers can undo it within seconds. The same scenarios as
 * e2e-evidence.test.ts, which keeps the first on a real `goodput up`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobEvent } from '../store/types.js';
import { fakePlain, fakePlane, fakeTrainer, type FakeTrainerOptions } from '../../test-support/control/fake-plane.js';

/** A control plane on 4 CPU slots with rounds every `interval_s`, as e2e-evidence.test.ts starts `goodput up`. */
const plane = (interval_s: number) => fakePlane({ slots: 4, interval_s, grace_s: 3, params: ['restart_delay_s=1'] });

const replicasOf = (e: JobEvent): number | undefined => {
  const m = /\b\d+ -> (\d+)\b/.exec(e.reason);
  return m ? Number(m[1]) : undefined;
};
const isGrowth = (e: JobEvent): boolean => e.kind === 'rescale' && (replicasOf(e) ?? 0) > 1;
/** A long synthetic job that may use all 4 slots. */
const trainer = (name: string, options: FakeTrainerOptions = {}) => ({
  name,
  command: fakeTrainer({ samples: 10_000_000, ...options }),
  max_replicas: 4,
});

describe('no growth before evidence (fake backend and clock)', () => {
  it('grows a job only after its first report', async () => {
    const p = await plane(1);
    // The first report comes 3 s after the start; rounds run every second meanwhile.
    const job = await p.submit(trainer('grow', { report_every_s: 3 }));
    const grown = await p.waitFor('the job to grow', 45, async () => (await p.store.listEvents(job.id)).find(isGrowth));
    const first = (await p.store.listReports(job.id, 1000))[0];
    assert.ok(first, 'it has reported');
    assert.ok(grown.at_ms >= first.received_at_ms, `grown at ${grown.at_ms}, first report at ${first.received_at_ms}`);
    await p.close();
  });

  it('never grows a job that reports no measurement, even one that may be stopped at any time', async () => {
    const p = await plane(1);
    const job = await p.submit({ name: 'plain', command: fakePlain(30), max_replicas: 4, preemptible: true });
    await p.waitFor('the job to run', 15, async () => ((await p.job(job.id)).state === 'running' ? true : undefined));
    // Rounds every second, 3 idle slots, and its minimum slice (4 s) long over.
    await p.clock.advance(12_000);
    assert.equal((await p.job(job.id)).allocation.length, 1);
    assert.deepEqual(
      (await p.store.listEvents(job.id)).filter((e) => e.kind === 'rescale'),
      [],
    );
    await p.close();
  });

  it('undoes a growth that measured slower within seconds, not at the next 60 s round', async () => {
    const p = await plane(60);
    const job = await p.submit(trainer('slow-growth', { multi_replica_slowdown: 6 }));
    const events = await p.waitFor('a growth, then a shrink back', 60, async () => {
      const all = await p.store.listEvents(job.id);
      const grow = all.findIndex(isGrowth);
      return grow >= 0 && all.slice(grow + 1).some((e) => e.kind === 'rescale') ? all : undefined;
    });
    const grow = events.find(isGrowth)!;
    const shrink = events.filter((e) => e.kind === 'rescale').find((e) => e.at_ms > grow.at_ms)!;
    assert.ok((replicasOf(shrink) ?? 99) < (replicasOf(grow) ?? 0), `${grow.reason}; then ${shrink.reason}`);
    assert.ok(
      shrink.at_ms - grow.at_ms < 45_000,
      `before the next 60 s round: ${events.map((e) => `${e.at_ms} ${e.kind} ${e.reason}`).join('\n')}`,
    );
    await p.close();
  });
});
