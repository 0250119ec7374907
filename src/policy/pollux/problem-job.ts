/** Per-job inputs of the Pollux allocation problem (pollux-spec §4.3) and its restart penalty. */

/** Restart delay (s) the artifact's penalty assumes. */
const RESTART_DELAY_S = 30;
/** The artifact's hard limit on the nodes one job may span. */
export const MAX_NODES_PER_JOB = 16;

/** Per-job inputs of one round, already resolved by the policy. */
export interface ProblemJob {
  /** Speedup relative to the job's fair share; must return 0 for (0, 0). */
  speedup: (num_nodes: number, num_replicas: number) => number;
  /** Effective replica cap (>= 0). */
  max_replicas: number;
  min_replicas: number;
  /** Non-preemptible job holding an allocation: its row is the base row in every state. */
  pinned: boolean;
  /** Multiplier applied to the scaled speedup when the row differs from the base row. */
  restart_factor: number;
}

/** Restart penalty factor f = max(age - 30 * restarts, 0) / (age + 30) (pollux-spec §4.3). */
export function restartFactor(age_s: number, restarts: number): number {
  const age = Math.max(age_s, 0);
  return Math.max(age - RESTART_DELAY_S * restarts, 0) / (age + RESTART_DELAY_S);
}
