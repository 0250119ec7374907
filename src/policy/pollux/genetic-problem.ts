/** What the genetic search (nsga2.ts) needs from a problem; states are slices of Int32Arrays. */
import type { Random } from '../../core/random.js';

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
