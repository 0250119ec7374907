import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Turns } from './turns.js';

/** Runs `steps` steps of `step_ms` of busy work, pausing between them; where a waiting callback ran. */
async function loop(turns: Turns, steps: number, step_ms: number): Promise<number | undefined> {
  let servedAt: number | undefined;
  let step = 0;
  setImmediate(() => (servedAt = step));
  for (; step < steps; step++) {
    await turns.pause();
    const t = performance.now();
    while (performance.now() - t < step_ms);
  }
  await new Promise<void>((done) => setImmediate(done));
  return servedAt;
}

describe('Turns', () => {
  it('gives way once its budget is spent, so a waiting callback runs mid-loop', async () => {
    const served = await loop(new Turns(20), 20, 5);
    assert.ok(served !== undefined && served > 0 && served <= 6, `served at step ${served}`);
  });

  it('never gives way in a loop shorter than its budget', async () => {
    assert.equal(await loop(new Turns(1000), 10, 1), 10);
  });
});
