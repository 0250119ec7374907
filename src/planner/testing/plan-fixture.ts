/**
 * A job as the planner's tests measure it (planner/*.test.ts, dashboard/plan-route.test.ts): its
 * batch limits, a model and the profile points that model gives at batches 16, 64 and 128.
 * Test-only (not shipped: testing/).
 */
import { limitsFixture, perfPoint } from '../../goodput/testing/perf-fixture.js';
import type { BatchLimits, PerfParams, ProfilePoint } from '../../goodput/types.js';
import type { GpuSpec, TypeModel } from '../plan-types.js';

/** Batch limits: 32 to start, at most 1024, 8 to 256 per replica, with accumulation. */
export const PLAN_LIMITS: BatchLimits = limitsFixture({
  init_batch_size: 32,
  max_batch_size: 1024,
  min_local_bsz: 8,
  max_local_bsz: 256,
});

/** A model whose synchronization is cheap within a node and costly across nodes. */
export const PLAN_PERF: PerfParams = {
  alpha_c: 0.01,
  beta_c: 0.001,
  alpha_r: 0.002,
  beta_r: 0.0001,
  alpha_n: 0.02,
  beta_n: 0.001,
  gamma: 1,
};

/** A measured job's model: its step grows with the batch (beta_c) as much as with the replicas. */
export const MEASURED_PERF: PerfParams = {
  alpha_c: 0.01,
  beta_c: 0.002,
  alpha_r: 0.02,
  beta_r: 0.002,
  alpha_n: 0.05,
  beta_n: 0.005,
  gamma: 1.2,
};

/** The points `perf` gives on one node at each of `replicas` and local batches 16, 64 and 128. */
export function planPoints(perf: PerfParams, replicas: readonly number[]): ProfilePoint[] {
  return replicas.flatMap((num_replicas) =>
    [16, 64, 128].map((local_bsz) => perfPoint({ num_replicas, local_bsz }, perf)),
  );
}

/** A fit's interval of its prediction error: -3% to +3%, from the job's own measurements. */
export const TIGHT_INTERVAL = { interval: { lo: -0.03, hi: 0.03 }, basis: 'fit', calibrated: false };

/**
 * The planner's model of `spec` for a job measured on one replica with PLAN_PERF, as tight off
 * its measurements as on them; `over` overrides any field.
 */
export function planModel(spec: GpuSpec, over: Partial<TypeModel> = {}): TypeModel {
  return {
    spec,
    source: 'measured',
    how: '',
    perf: PLAN_PERF,
    measured_shapes: ['1:1'],
    interval: TIGHT_INTERVAL,
    unmeasured_interval: TIGHT_INTERVAL,
    ...over,
  };
}
