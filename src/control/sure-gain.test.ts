/**
 * No reversal without evidence, through the control plane in fake time (FakeBackend and
 * FakeClock, test-support/control/fake-plane.ts): a job just grown is not shrunk again before it
 * has reported at its new size, though a shorter job arrives meanwhile; and the growth's event
 * states the gain the policy decided with, with its 80% interval (docs/policy.md).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobEvent } from '../store/types.js';
import { fakePlane, fakeTrainer } from '../../test-support/control/fake-plane.js';

const sizes = (e: JobEvent): [number, number] | undefined => {
  const m = /\b(\d+) -> (\d+)\b/.exec(e.reason);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
};
const resizes = (events: readonly JobEvent[]) =>
  events.filter((e) => e.kind === 'rescale' && sizes(e) !== undefined && sizes(e)![0] > 0 && sizes(e)![1] > 0);

describe('no reversal without evidence (fake backend and clock)', () => {
  it('keeps a grown job at its size until it reports there, then lets a shorter job have GPUs', async () => {
    const p = await fakePlane({ slots: 4, interval_s: 1, grace_s: 3, params: ['restart_delay_s=1'] });
    // Reports every 6 s: a long window between a relaunch and its first measurement.
    const long = await p.submit({
      name: 'long',
      command: fakeTrainer({ samples: 1e8, report_every_s: 6 }),
      max_replicas: 4,
    });
    const grown = await p.waitFor('the long job to grow', 60, async () =>
      resizes(await p.store.listEvents(long.id)).find((e) => sizes(e)![1] > sizes(e)![0]),
    );
    const short = await p.submit({ name: 'short', command: fakeTrainer({ samples: 3000 }), max_replicas: 4 });
    const shrink = await p.waitFor('the long job to shrink or the short one to finish', 120, async () => {
      const shrunk = resizes(await p.store.listEvents(long.id)).find((e) => e.at_ms > grown.at_ms);
      if (shrunk) return shrunk;
      return (await p.job(short.id)).state === 'succeeded' ? null : undefined;
    });
    const reportsAfter = (await p.store.listReports(long.id, 10_000)).filter((r) => r.received_at_ms > grown.at_ms);
    const firstAtNewSize = reportsAfter.find((r) => r.num_replicas === sizes(grown)![1]);
    if (shrink) {
      assert.ok(firstAtNewSize, `shrunk (${shrink.reason}) with no report at its new size`);
      assert.ok(
        shrink.at_ms >= firstAtNewSize.received_at_ms,
        `shrunk at ${shrink.at_ms}, measured at ${firstAtNewSize.received_at_ms}`,
      );
    }
    assert.match(
      grown.reason,
      /predicted speedup on \d+ x\d+\.\d\d, 80% between x\d+\.\d\d and x\d+\.\d\d relative to/,
    );
    await p.close();
  });
});
