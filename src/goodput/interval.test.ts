/** Intervals of predictions where the job measured nothing (goodput/interval.ts, docs/policy.md). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  correctionInterval,
  logErrorInterval,
  MAX_UNMEASURED_SPREAD,
  quantile,
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

describe('quantile and the correction interval', () => {
  it('quantile is the interpolated order statistic, duplicates and negatives included', () => {
    // A fixed pseudo-random set (LCG), checked against a comparator sort of its own.
    let x = 12345;
    const xs = Array.from({ length: 257 }, () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 4 - 2);
    xs.push(xs[3]!, xs[3]!, -0, 0);
    const sorted = [...xs].sort((a, b) => a - b);
    for (const q of [0, 0.1, 0.25, 0.5, 0.9, 1]) {
      const pos = q * (sorted.length - 1);
      const i = Math.floor(pos);
      const want = sorted[i]! + (sorted[Math.min(i + 1, sorted.length - 1)]! - sorted[i]!) * (pos - i);
      assert.equal(quantile(xs, q), want, `q = ${q}`);
    }
    assert.deepEqual([quantile([3, 1, 2], 0.5), quantile([], 0.5)], [2, NaN]);
  });

  it("a correction's interval is the same on every call (kept per correction object)", () => {
    const wide: StepCorrection = {
      compute: [],
      shapes: [
        {
          num_nodes: 1,
          num_replicas: 2,
          by_batch: [0.8, 1, 1.1, 1.3].map((factor, k) => ({ local_bsz: 32 << k, factor })),
        },
      ],
    };
    const first = correctionInterval(wide);
    assert.deepEqual(first, logErrorInterval([0.8, 1, 1.1, 1.3].map(Math.log)));
    assert.deepEqual(correctionInterval(wide), first);
    assert.deepEqual(correctionInterval(structuredClone(wide)), first, 'an equal correction, another object');
  });
});
