/**
 * Indices of an array of numbers in ascending order of their values, ties in index order: what
 * `indices.sort((a, b) => keys[a] - keys[b] || a - b)` gives, by the engine's native sort of the
 * doubles with each index written into the lowest bits of its key, then one exact insertion pass
 * (a comparator sort was a quarter of a round's time at 16,384 GPUs, and a radix sort in
 * JavaScript still a tenth of the first, not yet compiled, round: issue #49). Pure.
 */

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LOW = LITTLE_ENDIAN ? 0 : 1;
/** Index bits beyond this would move keys by more than 2^-32 of their value: comparator sort. */
const MAX_INDEX_BITS = 20;

/**
 * The positions 0..keys.length-1 ordered by ascending key, equal keys (−0 equal to 0) in
 * ascending position. Keys must not be NaN.
 */
export function sortedIndices(keys: ArrayLike<number>): Int32Array {
  const n = keys.length;
  let bits = 1;
  while (1 << bits <= n) bits++;
  const packed = new Float64Array(n);
  let finite = bits <= MAX_INDEX_BITS;
  for (let i = 0; i < n && finite; i++) {
    packed[i] = keys[i]! + 0; // -0 as 0
    finite = Number.isFinite(packed[i]);
  }
  if (!finite) return Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
  // The index in the mantissa's lowest bits, so that equal keys sort by index: a larger low part
  // is a larger positive number but a smaller negative one, hence the reversed index there.
  const mask = (1 << bits) - 1;
  const words = new Uint32Array(packed.buffer);
  for (let i = 0; i < n; i++) {
    const low = packed[i]! < 0 ? mask - i : i;
    words[2 * i + LOW] = ((words[2 * i + LOW]! & ~mask) | low) >>> 0;
  }
  packed.sort();
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const low = words[2 * i + LOW]! & mask;
    order[i] = packed[i]! < 0 ? mask - low : low;
  }
  // Keys that differed only in their lowest bits may now be out of order: one insertion pass
  // with the exact comparison restores it (nearly sorted input: linear time).
  for (let i = 1; i < n; i++) {
    const at = order[i]!;
    const key = keys[at]! + 0;
    let j = i - 1;
    while (j >= 0 && (keys[order[j]!]! + 0 > key || (keys[order[j]!]! + 0 === key && order[j]! > at))) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = at;
  }
  return order;
}
