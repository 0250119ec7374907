/**
 * NSGA-II over integer genomes, following pymoo 0.4.2 as Pollux uses it (pollux-spec §4.4):
 * binary tournaments on (domination, crowding distance), crossover with probability 0.9,
 * mutation and repair of every child, duplicate elimination with up to 100 extra mating rounds,
 * rank-and-crowding survival. Both objectives are maximized. Pure: all randomness comes from
 * the Random passed in.
 */
import type { Random } from '../../core/random.js';

/** The operations the search needs from a problem; states are slices of Int32Arrays. */
export interface GeneticProblem {
  readonly size: number;
  /** Writes the two objectives (to maximize) of X[off..off+size) into out[0], out[1]. */
  evaluate(X: Int32Array, off: number, out: Float64Array): void;
  /**
   * Makes the state feasible. Must be idempotent on states it returned (no RNG use then).
   * The search evaluates a child right after repairing it.
   */
  repair(X: Int32Array, off: number, rng: Random): void;
  /** Mutates in place; returns whether any cell changed. */
  mutate(X: Int32Array, off: number, rng: Random): boolean;
  /** Recombines two states in place; returns whether either changed. */
  crossover(A: Int32Array, aOff: number, B: Int32Array, bOff: number, rng: Random): boolean;
}

export interface Nsga2Options {
  /** Population size (default 100). */
  popSize?: number;
  /** Generations including the initialization, as pymoo counts them (default 100). */
  generations?: number;
  /** Probability that a mating applies crossover (default 0.9). */
  crossoverProb?: number;
  /** Extra mating rounds allowed to find unique offspring (default 100). */
  maxMatingRounds?: number;
}

export interface Nsga2Result {
  /** The non-dominated states of the final population, each `size` long. */
  front: Int32Array[];
  /** Objectives of `front`, pairs [obj0, obj1] (maximized). */
  objectives: Float64Array[];
  /** Generations actually run (the search stops early when no new offspring can be found). */
  generations: number;
}

/**
 * States live in one pool of slots (no copying on survival); populations are lists of slot ids.
 * F1, F2 are the minimized objectives (negated maximized ones).
 */
class Pool {
  readonly X: Int32Array;
  readonly F1: Float64Array;
  readonly F2: Float64Array;
  readonly hash: Uint32Array;
  readonly crowd: Float64Array;
  readonly rank: Int32Array;
  private readonly freeSlots: Int32Array;
  private freeCount: number;

  constructor(slots: number, readonly L: number) {
    this.X = new Int32Array(slots * L);
    this.F1 = new Float64Array(slots);
    this.F2 = new Float64Array(slots);
    this.hash = new Uint32Array(slots);
    this.crowd = new Float64Array(slots);
    this.rank = new Int32Array(slots);
    this.freeSlots = new Int32Array(slots);
    for (let i = 0; i < slots; i++) this.freeSlots[i] = slots - 1 - i;
    this.freeCount = slots;
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

  /** Whether `slot` duplicates one of ids[0..count). */
  isDuplicate(slot: number, ids: Int32Array, count: number): boolean {
    const h = this.hash[slot];
    for (let i = 0; i < count; i++) {
      const other = ids[i] as number;
      if (this.hash[other] === h && this.same(other, slot)) return true;
    }
    return false;
  }

  evaluate(problem: GeneticProblem, slot: number, out: Float64Array): void {
    problem.evaluate(this.X, slot * this.L, out);
    this.F1[slot] = -(out[0] as number);
    this.F2[slot] = -(out[1] as number);
  }
}

/**
 * Runs NSGA-II from `initial` states (repaired and de-duplicated first). Returns the first
 * non-dominated front of the final population.
 */
export function runNsga2(
  problem: GeneticProblem,
  initial: readonly Int32Array[],
  rng: Random,
  options: Nsga2Options = {},
): Nsga2Result {
  const popSize = options.popSize ?? 100;
  const generations = options.generations ?? 100;
  const pc = options.crossoverProb ?? 0.9;
  const maxRounds = options.maxMatingRounds ?? 100;
  const L = problem.size;
  const capacity = Math.max(popSize, initial.length);
  const pool = new Pool(capacity + 2 * popSize + 2, L);
  const X = pool.X;
  const out = new Float64Array(2);

  let pop = new Int32Array(capacity);
  let popCount = 0;
  let nextPop = new Int32Array(capacity);
  const off = new Int32Array(popSize);
  const batch = new Int32Array(popSize + 1);
  const changed = new Uint8Array(popSize + 1);
  const uniq = new Int32Array(popSize + 1);
  const sel = new Int32Array(2 * popSize + 2);
  const perm = new Int32Array(capacity);
  const candidates = new Int32Array(capacity + popSize);
  const sorter = new FrontSorter(capacity + popSize);

  // Initialization: repair, drop duplicates, evaluate, assign rank and crowding.
  for (const state of initial) {
    const slot = pool.alloc();
    X.set(state.subarray(0, L), slot * L);
    problem.repair(X, slot * L, rng);
    pool.computeHash(slot);
    if (pool.isDuplicate(slot, pop, popCount)) {
      pool.release(slot);
      continue;
    }
    pool.evaluate(problem, slot, out);
    pop[popCount++] = slot;
  }
  if (popCount === 0) return { front: [], objectives: [], generations: 0 };
  popCount = survive(pool, pop, popCount, nextPop, popCount, sorter, rng);
  [pop, nextPop] = [nextPop, pop];

  let gen = 1;
  for (; gen < generations; gen++) {
    // Mating until popSize unique offspring (or the retry budget is spent).
    let offCount = 0;
    for (let round = 0; offCount < popSize; ) {
      const remaining = popSize - offCount;
      const matings = Math.ceil(remaining / 2);
      tournament(pool, pop, popCount, 2 * matings, sel, perm, rng);
      for (let m = 0; m < matings; m++) {
        const a = pool.alloc();
        const b = pool.alloc();
        pool.copy(pop[sel[2 * m] as number] as number, a);
        pool.copy(pop[sel[2 * m + 1] as number] as number, b);
        batch[m] = a;
        batch[matings + m] = b;
        const crossed = rng.next() < pc && problem.crossover(X, a * L, X, b * L, rng);
        changed[m] = crossed ? 1 : 0;
        changed[matings + m] = crossed ? 1 : 0;
      }
      let nUniq = 0;
      for (let i = 0; i < 2 * matings; i++) {
        const slot = batch[i] as number;
        const o = slot * L;
        // A child identical to its parent duplicates a population member (repair is
        // idempotent on repaired states): drop it without repairing or hashing it.
        const mutated = problem.mutate(X, o, rng);
        let keep = mutated || changed[i] === 1;
        if (keep) {
          problem.repair(X, o, rng);
          pool.computeHash(slot);
          keep =
            !pool.isDuplicate(slot, pop, popCount) &&
            !pool.isDuplicate(slot, off, offCount) &&
            !pool.isDuplicate(slot, uniq, nUniq);
        }
        if (keep) {
          // Evaluated right after its repair (cheaper); evaluation draws no random numbers.
          pool.evaluate(problem, slot, out);
          uniq[nUniq++] = slot;
        } else pool.release(slot);
      }
      if (nUniq > remaining) {
        // Keep a random subset, as pymoo does when a round overshoots.
        rng.shuffle(uniq.subarray(0, nUniq));
        for (let u = remaining; u < nUniq; u++) pool.release(uniq[u] as number);
        nUniq = remaining;
      }
      for (let u = 0; u < nUniq; u++) off[offCount++] = uniq[u] as number;
      round++;
      if (round > maxRounds) break;
    }
    if (offCount === 0) break;
    // Survival over parents + offspring.
    candidates.set(pop.subarray(0, popCount), 0);
    candidates.set(off.subarray(0, offCount), popCount);
    popCount = survive(pool, candidates, popCount + offCount, nextPop, popSize, sorter, rng);
    [pop, nextPop] = [nextPop, pop];
  }

  const front: Int32Array[] = [];
  const objectives: Float64Array[] = [];
  for (let i = 0; i < popCount; i++) {
    const slot = pop[i] as number;
    if (pool.rank[slot] !== 0) continue;
    front.push(X.slice(slot * L, slot * L + L));
    objectives.push(Float64Array.of(-(pool.F1[slot] as number), -(pool.F2[slot] as number)));
  }
  return { front, objectives, generations: gen };
}

/** Picks `count` parents (positions in `pop`) by binary tournaments over random permutations. */
function tournament(
  pool: Pool,
  pop: Int32Array,
  n: number,
  count: number,
  sel: Int32Array,
  perm: Int32Array,
  rng: Random,
): void {
  let used = n; // forces a fresh permutation first
  const next = (): number => {
    if (used >= n) {
      for (let i = 0; i < n; i++) perm[i] = i;
      rng.shuffle(perm.subarray(0, n));
      used = 0;
    }
    return perm[used++] as number;
  };
  for (let i = 0; i < count; i++) {
    const a = next();
    const b = next();
    const sa = pop[a] as number;
    const sb = pop[b] as number;
    const rel = dominance(pool, sa, sb);
    if (rel > 0) sel[i] = a;
    else if (rel < 0) sel[i] = b;
    else {
      const ca = pool.crowd[sa] as number;
      const cb = pool.crowd[sb] as number;
      sel[i] = ca > cb ? a : cb > ca ? b : rng.next() < 0.5 ? a : b;
    }
  }
}

/** 1 if slot a dominates slot b, -1 if b dominates a, 0 otherwise (minimization). */
function dominance(pool: Pool, a: number, b: number): number {
  const a1 = pool.F1[a] as number;
  const a2 = pool.F2[a] as number;
  const b1 = pool.F1[b] as number;
  const b2 = pool.F2[b] as number;
  if (a1 <= b1 && a2 <= b2 && (a1 < b1 || a2 < b2)) return 1;
  if (b1 <= a1 && b2 <= a2 && (b1 < a1 || b2 < a2)) return -1;
  return 0;
}

/**
 * Rank-and-crowding survival: keeps at most `keep` of the slots ids[0..count) in `to`, sets
 * their rank and crowding, releases the others. Returns the number kept.
 */
function survive(
  pool: Pool,
  ids: Int32Array,
  count: number,
  to: Int32Array,
  keep: number,
  sorter: FrontSorter,
  rng: Random,
): number {
  const fronts = sorter.sort(pool.F1, pool.F2, ids, count);
  let kept = 0;
  for (let k = 0; k < fronts.length; k++) {
    const front = fronts[k] as number[];
    if (kept >= keep) {
      for (const slot of front) pool.release(slot);
      continue;
    }
    crowding(front, pool.F1, pool.F2, pool.crowd);
    for (const slot of front) pool.rank[slot] = k;
    if (kept + front.length > keep) {
      // Larger crowding distance first, random order among equals.
      rng.shuffle(front);
      front.sort((x, y) => (pool.crowd[y] as number) - (pool.crowd[x] as number) || 0);
      for (let i = 0; i < front.length; i++) {
        if (kept < keep) to[kept++] = front[i] as number;
        else pool.release(front[i] as number);
      }
    } else {
      for (const slot of front) to[kept++] = slot;
    }
  }
  return kept;
}
/**
 * Crowding distance of one front (pymoo 0.4.2): fronts of <= 2 points are all infinite;
 * points whose objective vector repeats an earlier one get 0; otherwise, per objective,
 * (next - previous) / (max - min) over the unique points (boundaries infinite, a zero range
 * contributes 0), averaged over the two objectives.
 */
function crowding(front: readonly number[], F1: Float64Array, F2: Float64Array, crowd: Float64Array): void {
  const n = front.length;
  if (n <= 2) {
    for (const i of front) crowd[i] = Infinity;
    return;
  }
  const unique: number[] = [];
  for (const i of front) {
    let dup = false;
    for (const u of unique) {
      if (F1[u] === F1[i] && F2[u] === F2[i]) {
        dup = true;
        break;
      }
    }
    crowd[i] = 0;
    if (!dup) unique.push(i);
  }
  for (const F of [F1, F2]) {
    const sorted = unique.slice().sort((a, b) => (F[a] as number) - (F[b] as number));
    const m = sorted.length;
    const norm = (F[sorted[m - 1] as number] as number) - (F[sorted[0] as number] as number);
    if (!(norm > 0)) continue;
    for (let p = 0; p < m; p++) {
      const i = sorted[p] as number;
      const prev = p === 0 ? Infinity : (F[i] as number) - (F[sorted[p - 1] as number] as number);
      const nextGap = p === m - 1 ? Infinity : (F[sorted[p + 1] as number] as number) - (F[i] as number);
      crowd[i] = (crowd[i] as number) + prev / norm + nextGap / norm;
    }
  }
  for (const i of unique) crowd[i] = (crowd[i] as number) / 2;
}

/** Non-dominated sorting for two minimized objectives (sweep over points sorted by F1, F2). */
class FrontSorter {
  private readonly idx: Int32Array;
  private readonly tmp: Int32Array;
  constructor(capacity: number) {
    this.idx = new Int32Array(capacity);
    this.tmp = new Int32Array(capacity);
  }

  /** Fronts (lists of slot ids) of the slots ids[0..count), best first. */
  sort(F1: Float64Array, F2: Float64Array, ids: Int32Array, count: number): number[][] {
    const idx = this.idx;
    idx.set(ids.subarray(0, count));
    mergeSort(idx, this.tmp, count, F1, F2);
    const fronts: number[][] = [];
    const last1: number[] = [];
    const last2: number[] = [];
    for (let q = 0; q < count; q++) {
      const p = idx[q] as number;
      const p1 = F1[p] as number;
      const p2 = F2[p] as number;
      let k = 0;
      // First front whose last member (smallest F2 so far) does not dominate p.
      for (; k < fronts.length; k++) {
        const l2 = last2[k] as number;
        if (p2 < l2 || (p1 === last1[k] && p2 === l2)) break;
      }
      if (k === fronts.length) fronts.push([]);
      (fronts[k] as number[]).push(p);
      last1[k] = p1;
      last2[k] = p2;
    }
    return fronts;
  }
}

/** Stable bottom-up merge sort of a[0..n) by (F1, F2, slot id) ascending. */
function mergeSort(a: Int32Array, tmp: Int32Array, n: number, F1: Float64Array, F2: Float64Array): void {
  let src = a;
  let dst = tmp;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        const x = src[i] as number;
        const y = src[j] as number;
        const x1 = F1[x] as number;
        const y1 = F1[y] as number;
        const takeRight = y1 < x1 || (y1 === x1 && ((F2[y] as number) < (F2[x] as number) || (F2[y] === F2[x] && y < x)));
        if (takeRight) {
          dst[k++] = y;
          j++;
        } else {
          dst[k++] = x;
          i++;
        }
      }
      while (i < mid) dst[k++] = src[i++] as number;
      while (j < hi) dst[k++] = src[j++] as number;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src !== a) a.set(src.subarray(0, n));
}
