/** Intervals of predictions where the job measured nothing (goodput/interval.ts, docs/policy.md). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  correctionInterval,
  MAX_UNMEASURED_SPREAD,
  measuredDistance,
  unmeasuredInterval,
  UNMEASURED_SPREAD_PER_LOG,
} from './interval.js';
import type { StepCorrection } from './types.js';

/** Measured at 1 replica (local 64, 128) and 4 replicas (local 32), all factors 1: residuals at the floor. */
const correction: StepCorrection = {
  compute: [],
  shapes: [
    {
      num_nodes: 1,
      num_replicas: 1,
      by_batch: [
        { local_bsz: 64, factor: 1 },
        { local_bsz: 128, factor: 1 },
      ],
    },
    { num_nodes: 1, num_replicas: 4, by_batch: [{ local_bsz: 32, factor: 1 }] },
  ],
};

describe('intervals where nothing was measured', () => {
  it('measures the log-distance to the nearest measured configuration, 0 at a measured one', () => {
    assert.equal(measuredDistance(correction, 1, 1, 128), 0);
    assert.equal(measuredDistance(correction, 1, 4, 32), 0);
    assert.ok(Math.abs(measuredDistance(correction, 1, 2, 64) - Math.LN2) < 1e-12, 'one doubling of replicas');
    assert.ok(Math.abs(measuredDistance(correction, 1, 1, 256) - Math.LN2) < 1e-12, 'one doubling of the batch');
    // 2 nodes of 4 replicas each at local 32: nodes x2, replicas x2 from the measured 4.
    assert.ok(Math.abs(measuredDistance(correction, 2, 8, 32) - 2 * Math.LN2) < 1e-12);
    assert.equal(measuredDistance({ compute: [], shapes: [] }, 1, 1, 64), Infinity);
  });

  it('widens the residual interval by the distance, up to a cap, and not at all at a measured configuration', () => {
    const base = correctionInterval(correction);
    assert.deepEqual(unmeasuredInterval(correction, 0), base);
    const one = unmeasuredInterval(correction, Math.LN2);
    assert.ok(Math.abs(base.lo - one.lo - UNMEASURED_SPREAD_PER_LOG * Math.LN2) < 1e-12);
    assert.ok(Math.abs(one.hi - base.hi - UNMEASURED_SPREAD_PER_LOG * Math.LN2) < 1e-12);
    const far = unmeasuredInterval(correction, 100);
    assert.ok(Math.abs(base.lo - far.lo - MAX_UNMEASURED_SPREAD) < 1e-12, 'capped');
  });
});
