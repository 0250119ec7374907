import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { job, limits, perf } from './test-jobs.js';
import { modelSpeedup, viewSpeedup, type SpeedupFields } from './view-speedup.js';

describe('view speedup table', () => {
  it('stays the size asked for when the node size changes round to round (the shares layer views)', () => {
    const model = { perf, grad: { sqr: 0.01, var: 1 }, limits };
    const m = modelSpeedup(model, job('a'), undefined, false);
    const fields = (gpus: number): SpeedupFields => ({
      speedup_model: m,
      speedup_measured: 0,
      speedup_share: 1,
      speedup_gpus: gpus,
    });
    const first = viewSpeedup.call(fields(4), 8);
    // Before the fix the table doubled at every change of node size: 64 x 2^12 entries here.
    for (let round = 0; round < 12; round++) viewSpeedup.call(fields(3 + (round % 2)), 8);
    assert.ok(m.by_replicas.length <= 64, `table of ${m.by_replicas.length}`);
    assert.equal(viewSpeedup.call(fields(4), 8), first);
  });
});
