/**
 * The digits example as the batch-decision tests use it (test-only): B0 64, the script's
 * max_batch_size 512, local batch 8..256 with accumulation, a fitted model, and one measured step.
 */
import { measuredStepFixture } from '../../../goodput/testing/perf-fixture.js';
import type { PerfParams } from '../../../goodput/types.js';
import { jobRecordFixture } from '../../../store/job-fixture.js';
import type { JobRecord, Measurement } from '../../../store/types.js';

export const DIGITS_LIMITS = {
  init_batch_size: 64,
  max_batch_size: 512,
  min_local_bsz: 8,
  max_local_bsz: 256,
  accumulation: true,
};

export const DIGITS_PERF: PerfParams = {
  alpha_c: 0.004,
  beta_c: 0.0002,
  alpha_n: 1e-8,
  beta_n: 1e-8,
  alpha_r: 0.002,
  beta_r: 1e-5,
  gamma: 1.5,
};

/** A digits job with its fitted model (and `extra` over it). */
export function digitsJob(extra: Partial<JobRecord> = {}): JobRecord {
  return jobRecordFixture({ limits: DIGITS_LIMITS, perf: DIGITS_PERF, grad: { sqr: 1, var: 40 }, ...extra });
}

/** One report's measured step at step 10, time 1 s. */
export function digitsStep(local_bsz: number, accum_steps: number, replicas = 1, step_time_s = 0.05): Measurement {
  return measuredStepFixture({ time_s: 1, step: 10, num_replicas: replicas, local_bsz, accum_steps, step_time_s });
}
