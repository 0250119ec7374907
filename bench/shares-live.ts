/**
 * `npm run bench:shares-live`: issue 48's live case on a real `goodput up --cpu-slots 4
 * --interval-s 5`: alice submits 6 preemptible plain jobs; once they fill the 4 slots, bob submits
 * 2; over the 150 s that follow, the slots each holds are sampled every second through the API.
 * Acceptance: bob holds >= 1.6 slots on average, and alice >= 1.6.
 *   npm run bench:shares-live -- [--interval-s 5] [--window-s 150] [--json]
 */
import { waitFor } from '../test-support/control/harness.js';
import { averageOver, liveCluster, submitPlain } from '../test-support/control/shares-live.js';
import { benchArgs } from './bench-args.js';

const USAGE = `
usage: npm run bench:shares-live -- [--interval-s 5] [--window-s 150] [--json]
Average slots held by alice (6 preemptible jobs) and bob (2, submitted once alice fills the 4 slots)
over the window that follows, on a real goodput up --cpu-slots 4 (issue 48; target >= 1.6 each).
`;
const values = benchArgs(USAGE, {
  'interval-s': { type: 'string', default: '5' },
  'window-s': { type: 'string', default: '150' },
  json: { type: 'boolean', default: false },
});
const interval_s = Number(values['interval-s']);
const window_s = Number(values['window-s']);
const TARGET = 1.6;

const live = await liveCluster(interval_s);
try {
  const alice = await live.as('alice');
  const bob = await live.as('bob');
  const a = await submitPlain(alice, 'alice', 6, live.data_dir);
  await waitFor('alice to hold all 4 slots', 60_000, async () => (await live.holding(alice, a)) === 4);
  const b = await submitPlain(bob, 'bob', 2, live.data_dir);
  const held = { alice: 0, bob: 0 };
  let n = 0;
  await averageOver(window_s * 1000, 1000, async () => {
    held.alice += await live.holding(alice, a);
    held.bob += await live.holding(bob, b);
    n++;
    return 0;
  });
  const avg = { alice: held.alice / n, bob: held.bob / n };
  const pass = avg.alice >= TARGET && avg.bob >= TARGET;
  if (values.json)
    console.log(JSON.stringify({ interval_s, window_s, samples: n, avg_slots: avg, target: TARGET, pass }));
  else
    console.log(
      `over ${window_s} s after bob's submit (${n} samples, --interval-s ${interval_s}): ` +
        `bob holds ${avg.bob.toFixed(2)} of 4 slots on average, alice ${avg.alice.toFixed(2)} ` +
        `(target >= ${TARGET} each): ${pass ? 'PASS' : 'FAIL'}`,
    );
  process.exitCode = pass ? 0 : 1;
} finally {
  live.close();
}
