import assert from 'node:assert/strict';
import { test } from 'node:test';
import { adascaleGain, efficiency } from './efficiency.js';

const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-12, `${a} != ${b}`);

test('AdaScale gain g(s) = (nu + sigma^2) / (nu / s + sigma^2)', () => {
  close(adascaleGain({ sqr: 0.5, var: 2 }, 4), 2.5 / 1.0);
  close(adascaleGain({ sqr: 0.5, var: 2 }, 1), 1);
  // Pure noise scales perfectly, pure signal not at all.
  close(adascaleGain({ sqr: 0, var: 1 }, 8), 8);
  close(adascaleGain({ sqr: 1, var: 0 }, 8), 1);
});

test('gain is 1 when the denominator is not positive', () => {
  assert.equal(adascaleGain({ sqr: -1, var: 0.5 }, 1), 1);
  assert.equal(adascaleGain({ sqr: 0, var: 0 }, 4), 1);
});

test('efficiency = g/s = (phi + B0) / (phi + B) with phi = B0 nu / sigma^2', () => {
  const grad = { sqr: 0.5, var: 2 };
  const phi = (128 * 2) / 0.5;
  close(efficiency(grad, 128, 512), 2.5 / 4);
  close(efficiency(grad, 128, 512), (phi + 128) / (phi + 512));
  close(efficiency(grad, 128, 128), 1);
});
