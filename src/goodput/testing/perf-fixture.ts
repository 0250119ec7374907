/**
 * What a job measures and reports, for tests of every layer: a model and the profile points it
 * predicts (goodput/key-profile.test.ts, control/reports/*.test.ts: one model, so that a point
 * "slower than the profile" means the same in each), batch limits and a measured step.
 * Test-only (not shipped: testing/).
 */
import type { MeasuredStep } from '../profile.js';
import { accumStepTime_s, optimStepTime_s } from '../throughput.js';
import type { BatchLimits, PerfParams, ProfilePoint } from '../types.js';

/** A model whose synchronization costs more across nodes (alpha_n) than within one (alpha_r). */
export const PERF_FIXTURE: PerfParams = {
  alpha_c: 0.02,
  beta_c: 0.001,
  alpha_n: 0.2,
  beta_n: 0.01,
  alpha_r: 0.05,
  beta_r: 0.005,
  gamma: 1.5,
};

/**
 * A fitted-looking model of a cifar10-like job (the fit src/goodput/speedup.test.ts uses, rounded), for
 * tests that need realistic goodput-based decisions rather than a clear inter-node cost.
 */
export const CIFAR_PERF: PerfParams = {
  alpha_c: 0.0032,
  beta_c: 0.00078,
  alpha_n: 0.0265,
  beta_n: 0.0028,
  alpha_r: 0.0114,
  beta_r: 0.0004,
  gamma: 1.16,
};

/** Where a configuration is measured and how far its times are off the model (`scale`, 1: exact). */
export interface PerfPointAt {
  num_replicas: number;
  num_nodes?: number;
  local_bsz?: number;
  scale?: number;
  /** How far the accumulation (compute) time alone is off the model (default: `scale`). */
  accum_scale?: number;
}

/** The profile point `perf` predicts at `at` (one node, batch 32 unless said), its times scaled as `at` says. */
export function perfPoint(at: PerfPointAt, perf: PerfParams = PERF_FIXTURE): ProfilePoint {
  const { num_replicas, num_nodes = 1, local_bsz = 32, scale = 1, accum_scale = scale } = at;
  return {
    num_nodes,
    num_replicas,
    local_bsz,
    accum_step_time_s: accumStepTime_s(perf, local_bsz) * accum_scale,
    optim_step_time_s: optimStepTime_s(perf, num_nodes, num_replicas, local_bsz) * scale,
  };
}

/** Batch limits of a job: 128 to start, at most 4096, 32 to 512 per replica, with accumulation; `extra` overrides. */
export function limitsFixture(extra: Partial<BatchLimits> = {}): BatchLimits {
  return {
    init_batch_size: 128,
    max_batch_size: 4096,
    min_local_bsz: 32,
    max_local_bsz: 512,
    accumulation: true,
    ...extra,
  };
}

/**
 * Batch limits whose local batch caps at 16 (from 1): a total batch of 64 to 1024 is split with
 * accumulation steps on few replicas.
 */
export const ACCUMULATING_LIMITS: BatchLimits = limitsFixture({
  init_batch_size: 64,
  max_batch_size: 1024,
  min_local_bsz: 1,
  max_local_bsz: 16,
});

/**
 * A measured step of one replica on one node: batch 32, no accumulation, 0.1 s a step with no
 * synchronization; `extra` adds the report's other fields (time, step, samples...) or overrides.
 */
export function measuredStepFixture<E extends object = object>(extra?: E): MeasuredStep & E {
  return {
    num_nodes: 1,
    num_replicas: 1,
    local_bsz: 32,
    accum_steps: 0,
    step_time_s: 0.1,
    sync_time_s: 0,
    ...extra,
  } as MeasuredStep & E;
}
