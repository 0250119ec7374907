/**
 * NSGA-II over integer genomes, following pymoo 0.4.2 as Pollux uses it (pollux-spec §4.4):
 * binary tournaments on (domination, crowding distance), crossover with probability 0.9,
 * mutation and repair of every child, duplicate elimination with up to 100 extra mating rounds,
 * rank-and-crowding survival. Both objectives are maximized. Pure: all randomness comes from
 * the Random passed in.
 */
import type { Random } from '../../core/random.js';
import { FrontSorter, crowding } from './fronts.js';
import type { GeneticProblem } from './genetic-problem.js';
import { StatePool } from './state-pool.js';

export type { GeneticProblem } from './genetic-problem.js';

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
  const pool = new StatePool(capacity + 2 * popSize + 2, L);
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
    if (pool.hasSeen(slot)) {
      pool.release(slot);
      continue;
    }
    pool.addSeen(slot);
    pool.evaluate(problem, slot, out);
    pop[popCount++] = slot;
  }
  if (popCount === 0) return { front: [], objectives: [], generations: 0 };
  popCount = survive(pool, pop, popCount, nextPop, popCount, sorter, rng);
  [pop, nextPop] = [nextPop, pop];

  let gen = 1;
  for (; gen < generations; gen++) {
    // Mating until popSize unique offspring (or the retry budget is spent). Duplicates are
    // looked up among the population, the accepted offspring and earlier children.
    pool.resetSeen([pop, popCount]);
    let offCount = 0;
    for (let round = 0; offCount < popSize;) {
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
          keep = !pool.hasSeen(slot);
        }
        if (keep) {
          pool.addSeen(slot);
          // Evaluated right after its repair (cheaper); evaluation draws no random numbers.
          pool.evaluate(problem, slot, out);
          uniq[nUniq++] = slot;
        } else pool.release(slot);
      }
      const overshoot = nUniq > remaining;
      if (overshoot) {
        // Keep a random subset, as pymoo does when a round overshoots.
        rng.shuffle(uniq.subarray(0, nUniq));
        for (let u = remaining; u < nUniq; u++) pool.release(uniq[u] as number);
        nUniq = remaining;
      }
      for (let u = 0; u < nUniq; u++) off[offCount++] = uniq[u] as number;
      if (overshoot) {
        // Released slots must leave the duplicate set before they are reused.
        pool.resetSeen([pop, popCount], [off, offCount]);
      }
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
  pool: StatePool,
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
function dominance(pool: StatePool, a: number, b: number): number {
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
  pool: StatePool,
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
