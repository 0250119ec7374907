/**
 * Storage of the genetic search: states in one Int32Array of fixed-size slots (no copying on
 * survival; populations are lists of slot ids), their objectives, ranks and crowding
 * distances, and a hash set for duplicate detection.
 */
import type { GeneticProblem } from './genetic-problem.js';

/**
 * States live in one pool of slots (no copying on survival); populations are lists of slot ids.
 * F1, F2 are the minimized objectives (negated maximized ones).
 */
export class StatePool {
  readonly X: Int32Array;
  readonly F1: Float64Array;
  readonly F2: Float64Array;
  readonly hash: Uint32Array;
  readonly crowd: Float64Array;
  readonly rank: Int32Array;
  private readonly freeSlots: Int32Array;
  private freeCount: number;
  /** Open-addressing set of registered slots (slot + 1; 0 = empty), keyed by state hash. */
  private readonly seen: Int32Array;

  constructor(
    slots: number,
    readonly L: number,
  ) {
    this.X = new Int32Array(slots * L);
    this.F1 = new Float64Array(slots);
    this.F2 = new Float64Array(slots);
    this.hash = new Uint32Array(slots);
    this.crowd = new Float64Array(slots);
    this.rank = new Int32Array(slots);
    this.freeSlots = new Int32Array(slots);
    for (let i = 0; i < slots; i++) this.freeSlots[i] = slots - 1 - i;
    this.freeCount = slots;
    let size = 16;
    while (size < 4 * slots) size *= 2;
    this.seen = new Int32Array(size);
  }

  alloc(): number {
    return this.freeSlots[--this.freeCount] as number;
  }

  release(slot: number): void {
    this.freeSlots[this.freeCount++] = slot;
  }

  /** Copies state `from` into slot `to`. */
  copy(from: number, to: number): void {
    const L = this.L;
    this.X.copyWithin(to * L, from * L, from * L + L);
  }

  same(a: number, b: number): boolean {
    const X = this.X;
    const L = this.L;
    const ao = a * L;
    const bo = b * L;
    for (let i = 0; i < L; i++) if (X[ao + i] !== X[bo + i]) return false;
    return true;
  }

  computeHash(slot: number): void {
    const X = this.X;
    const o = slot * this.L;
    let h = 0x811c9dc5;
    for (let i = 0; i < this.L; i++) {
      h ^= X[o + i] as number;
      h = Math.imul(h, 0x01000193);
    }
    this.hash[slot] = h >>> 0;
  }

  /** Registers exactly the states in the first `count` slots of each (ids, count) pair. */
  resetSeen(...groups: readonly (readonly [Int32Array, number])[]): void {
    this.seen.fill(0);
    for (const [ids, count] of groups) for (let i = 0; i < count; i++) this.addSeen(ids[i] as number);
  }

  /** Registers the state in `slot` (its hash must be computed) for duplicate detection. */
  addSeen(slot: number): void {
    const mask = this.seen.length - 1;
    let i = (this.hash[slot] as number) & mask;
    while (this.seen[i] !== 0) i = (i + 1) & mask;
    this.seen[i] = slot + 1;
  }

  /** Whether a registered state other than `slot` equals the state in `slot`. */
  hasSeen(slot: number): boolean {
    const mask = this.seen.length - 1;
    const h = this.hash[slot] as number;
    for (let i = h & mask; this.seen[i] !== 0; i = (i + 1) & mask) {
      const other = (this.seen[i] as number) - 1;
      if (other !== slot && this.hash[other] === h && this.same(other, slot)) return true;
    }
    return false;
  }

  evaluate(problem: GeneticProblem, slot: number, out: Float64Array): void {
    problem.evaluate(this.X, slot * this.L, out);
    this.F1[slot] = -(out[0] as number);
    this.F2[slot] = -(out[1] as number);
  }
}
