import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Random } from '../../core/random.js';
import { sortedIndices } from './sorted-indices.js';

function bySort(keys: readonly number[]): number[] {
  return keys.map((_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
}

test('sortedIndices orders as the comparator sort does, ties in index order', () => {
  const random = new Random(7);
  for (const n of [0, 1, 2, 17, 1000, 70_000]) {
    // Few distinct values (many ties), both signs, zeros of both signs, tiny and huge magnitudes.
    const pool = [
      0,
      -0,
      1,
      -1,
      1e-300,
      -1e-300,
      5e-324,
      -5e-324,
      3.5,
      -2.25,
      1e300,
      -1e300,
      0.1,
      0.1 + 1e-16,
      12345.678,
    ];
    const keys = Array.from({ length: n }, (_, i) =>
      i % 3 === 0
        ? pool[Math.floor(random.next() * pool.length)]!
        : (random.next() - 0.5) * 10 ** Math.floor(random.next() * 8),
    );
    assert.deepEqual([...sortedIndices(keys)], bySort(keys), `n = ${n}`);
  }
});

test('sortedIndices reads typed arrays and keeps them unchanged', () => {
  const keys = Float64Array.from([3, -1, 2, -1, 0]);
  assert.deepEqual([...sortedIndices(keys)], [1, 3, 4, 2, 0]);
  assert.deepEqual([...keys], [3, -1, 2, -1, 0]);
});

test('sortedIndices: keys that differ only in their lowest bits, and infinite keys, sort exactly', () => {
  const near = Array.from(
    { length: 5000 },
    (_, i) => (i % 2 === 0 ? 1 : -1) * (1 + ((i * 7919) % 97) * Number.EPSILON),
  );
  assert.deepEqual([...sortedIndices(near)], bySort(near));
  const infinite = [3, Infinity, -Infinity, 0, Infinity, -1];
  assert.deepEqual([...sortedIndices(infinite)], bySort(infinite));
});
