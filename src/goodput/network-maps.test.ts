import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitParameterMap, fitProxyMap, parameterMapTerm_s } from './network-maps.js';

const P = [100e6, 10e6, 50e6, 2e6];
const PROXY = [0.02, 0.1, 0.3, 0.05];
const INTRA_S = [0.05, 0.002, 0.3, 0.01];

function assertRel(actual: number, expected: number, tol: number, what: string): void {
  assert.ok(Math.abs(actual / expected - 1) <= tol, `${what}: ${actual} vs ${expected}`);
}

test('parameterMapTerm_s is w S + a P + b proxy', () => {
  const map = { sync_per_parameter_s: 1e-8, sync_per_proxy_s: 2, intra_sync_weight: 1 };
  assertRel(parameterMapTerm_s(map, 50e6, 0.1, 0.3), 0.3 + 0.5 + 0.2, 1e-12, 'term');
  assertRel(parameterMapTerm_s({ ...map, intra_sync_weight: 0 }, 50e6, 0.1, 0.3), 0.7, 1e-12, 'without S');
});

test('fitParameterMap recovers a and b under a fixed weight, and the weight when fitted', () => {
  const truth = (w: number): number[] =>
    P.map((p, j) => w * (INTRA_S[j] as number) + 8e-9 * p + 2 * (PROXY[j] as number));
  const fixed = fitParameterMap(P, PROXY, INTRA_S, truth(1), 1);
  assert.equal(fixed.intra_sync_weight, 1);
  assertRel(fixed.sync_per_parameter_s, 8e-9, 1e-3, 'a');
  assertRel(fixed.sync_per_proxy_s, 2, 1e-3, 'b');
  const fitted = fitParameterMap(P, PROXY, INTRA_S, truth(0.5), 'fitted');
  assertRel(fitted.intra_sync_weight, 0.5, 1e-2, 'w');
  assertRel(fitted.sync_per_parameter_s, 8e-9, 1e-2, 'a with w fitted');
});

test('a job whose own intra-node sync exceeds its bandwidth term leaves finite, non-negative coefficients', () => {
  const map = fitParameterMap([10e6, 20e6], [0.1, 0.1], [1, 1], [0.5, 0.6], 1);
  for (const v of [map.sync_per_parameter_s, map.sync_per_proxy_s]) assert.ok(Number.isFinite(v) && v >= 0, `${v}`);
  // The other terms shrink toward 0: the map cannot go below S, and adds next to nothing to it.
  assert.ok(parameterMapTerm_s(map, 20e6, 0.1, 1) < 1.001, `${parameterMapTerm_s(map, 20e6, 0.1, 1)}`);
});

test('fitProxyMap: ratio is the geometric mean of bandwidth / proxy; power finds the exponent', () => {
  const ratio = fitProxyMap([0.1, 0.4], [0.2, 3.2], 'ratio');
  assert.equal(ratio.exponent, 1);
  assertRel(ratio.scale, Math.sqrt(2 * 8), 1e-12, 'scale');
  const power = fitProxyMap([0.1, 0.4, 0.2], [3 * 0.1 ** 1.5, 3 * 0.4 ** 1.5, 3 * 0.2 ** 1.5], 'power');
  assertRel(power.exponent, 1.5, 1e-9, 'exponent');
  assertRel(power.scale, 3, 1e-9, 'scale');
});
