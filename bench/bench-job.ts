/**
 * What a job of the server benches (bench:dashboard's store, bench:scale's server part) reports
 * and is fitted with. These benches measure the server, not the scheduler's choices, so every
 * job steps alike; only where, when and how far along it is differs.
 */
import type { PerfParams } from '../src/goodput/types.js';
import type { Measurement } from '../src/store/types.js';

/** The fitted model every running bench job is seeded with. */
export const BENCH_PERF: PerfParams = {
  alpha_c: 0.02,
  beta_c: 0.0008,
  alpha_n: 0.01,
  beta_n: 0.002,
  alpha_r: 0.005,
  beta_r: 0.001,
  gamma: 1.5,
};

/** Where, when and how far along a bench job's report entry is. */
export type BenchStepAt = Pick<Measurement, 'time_s' | 'step' | 'num_nodes' | 'num_replicas' | 'samples'> &
  Partial<Pick<Measurement, 'remaining_samples'>>;

/**
 * A bench job's report entry at `at`: batch 64 per replica with no accumulation, 0.2 s a step
 * (0.03 s of it synchronizing), and the same gradient statistics every time.
 */
export function benchStep(at: BenchStepAt): Measurement {
  return {
    local_bsz: 64,
    accum_steps: 0,
    step_time_s: 0.2,
    sync_time_s: 0.03,
    grad_sqr: 0.5,
    grad_var: 1.5,
    ...at,
  };
}
