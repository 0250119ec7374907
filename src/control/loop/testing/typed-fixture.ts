/**
 * Jobs on a cluster of two GPU types (a100, t4) for the tests of per-type facts and of moves
 * between types (control/loop/typed-snapshot.test.ts, typed-resume.test.ts): a key `k` whose
 * earlier jobs measured a100, and a job of it running on one t4 GPU. Test-only (not shipped: testing/).
 */
import type { PerfParams } from '../../../goodput/types.js';
import { jobRecordFixture, storedProfileFixture } from '../../../store/job-fixture.js';
import type { JobRecord, StoredKeyProfile } from '../../../store/types.js';

/** A fixed batch of 64 (no accumulation). */
export const TYPED_LIMITS = {
  init_batch_size: 64,
  max_batch_size: 64,
  min_local_bsz: 8,
  max_local_bsz: 64,
  accumulation: false,
};

/** A model whose compute time is `scale` times a100's (cheap synchronization). */
export function typedPerf(scale: number): PerfParams {
  return {
    alpha_c: 0.1 * scale,
    beta_c: 0.01 * scale,
    alpha_n: 1e-8,
    beta_n: 1e-8,
    alpha_r: 0.01,
    beta_r: 0.001,
    gamma: 1.5,
  };
}

/** What earlier jobs of key `k` measured on a100. */
export const A100_PROFILE: StoredKeyProfile = storedProfileFixture(
  'k',
  'a100',
  [{ num_nodes: 1, num_replicas: 1, local_bsz: 64, accum_step_time_s: 0.74, optim_step_time_s: 0.75 }],
  typedPerf(1),
  { max_measured_replicas: 1, grad: [{ progress: 0, sqr: 1, var: 4 }], limits: TYPED_LIMITS },
);

/**
 * A job of key `k` running on one t4 GPU (policy node 1) that fitted its model there, 8x slower
 * than a100, with 10 million samples left and a checkpoint on stop; `extra` overrides.
 */
export function onT4Fixture(extra: Partial<JobRecord> = {}): JobRecord {
  return jobRecordFixture({
    ...{ state: 'running', submitted_at_ms: 0, started_at_ms: 1000, launched_at_ms: 1000, launches: 1 },
    ...{ allocation: [1], devices: [0], max_profiled_replicas: 1, step: 100, samples: 6400 },
    ...{ remaining_samples: 10_000_000, limits: TYPED_LIMITS, perf: typedPerf(8), grad: { sqr: 1, var: 4 } },
    checkpoint_on_stop: true,
    spec: { ...jobRecordFixture().spec, max_replicas: 1, profile: 'k' },
    ...extra,
  });
}
