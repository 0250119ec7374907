import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyInterval, chooseVariant, insideInterval, logErrorInterval, quantile } from './type-calibration.js';

describe('calibrated intervals', () => {
  it('quantiles interpolate between order statistics', () => {
    assert.equal(quantile([3, 1, 2], 0.5), 2);
    assert.equal(quantile([0, 10], 0.1), 1);
    assert.equal(quantile([5], 0.9), 5);
    assert.ok(Number.isNaN(quantile([], 0.5)));
  });

  it('an 80% interval of 0..100 log errors is their 10th..90th percentiles and holds 81 of 101', () => {
    const errors = Array.from({ length: 101 }, (_, i) => i / 100);
    const interval = logErrorInterval([...errors, NaN]);
    assert.ok(interval);
    assert.ok(Math.abs(interval.lo - 0.1) < 1e-12 && Math.abs(interval.hi - 0.9) < 1e-12);
    assert.equal(errors.filter((e) => insideInterval(e, interval)).length, 81);
    assert.equal(insideInterval(undefined, interval), false, 'a row the model cannot predict is outside');
    assert.equal(logErrorInterval([]), undefined);
    const [lo, hi] = applyInterval(100, { lo: Math.log(0.5), hi: Math.log(2) });
    assert.ok(Math.abs(lo - 50) < 1e-9 && Math.abs(hi - 200) < 1e-9);
  });

  it('chooses the lowest score, ties to the earlier variant, none when nothing is finite', () => {
    assert.equal(chooseVariant([0.2, 0.1, 0.1]), 1);
    assert.equal(chooseVariant([NaN, 0.3]), 1);
    assert.equal(chooseVariant([NaN]), -1);
  });
});
