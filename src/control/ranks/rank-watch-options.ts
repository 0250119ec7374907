/** Options of the verdicts across ranks (rank-watch.ts), apart so the controller's options import no part. */
import type { HangOptions } from '../../doctor/ranks/hang.js';
import type { StragglerOptions } from '../../doctor/ranks/straggler.js';

/** Thresholds of both verdicts and the wait for stacks. */
export interface RankWatchOptions {
  readonly straggler?: StragglerOptions;
  readonly hang?: HangOptions;
  /** How long to wait for the ranks' stack dumps after asking (s); default 2. */
  readonly stacks_wait_s?: number;
}
