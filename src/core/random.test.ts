import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Random } from './random.js';

test('same seed gives the same sequence, different seeds differ', () => {
  const a = new Random(42);
  const b = new Random(42);
  const c = new Random(43);
  const sa = Array.from({ length: 20 }, () => a.next());
  const sb = Array.from({ length: 20 }, () => b.next());
  const sc = Array.from({ length: 20 }, () => c.next());
  assert.deepEqual(sa, sb);
  assert.notDeepEqual(sa, sc);
});

test('next() stays in [0, 1) and is roughly uniform', () => {
  const rng = new Random(7);
  let sum = 0;
  const bins = new Array<number>(10).fill(0);
  const n = 100_000;
  for (let i = 0; i < n; i++) {
    const v = rng.next();
    assert.ok(v >= 0 && v < 1);
    sum += v;
    bins[Math.floor(v * 10)]++;
  }
  assert.ok(Math.abs(sum / n - 0.5) < 0.01);
  for (const count of bins) assert.ok(Math.abs(count / n - 0.1) < 0.01);
});

test('int(lo, hi) is inclusive at both ends', () => {
  const rng = new Random(1);
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const v = rng.int(2, 5);
    assert.ok(Number.isInteger(v) && v >= 2 && v <= 5);
    seen.add(v);
  }
  assert.deepEqual([...seen].sort(), [2, 3, 4, 5]);
  assert.equal(rng.int(3, 3), 3);
});

test('permutation(n) is a permutation of 0..n-1', () => {
  const rng = new Random(3);
  const p = rng.permutation(50);
  assert.deepEqual(
    p.slice().sort((x, y) => x - y),
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.notDeepEqual(
    p,
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.deepEqual(rng.permutation(0), []);
});
