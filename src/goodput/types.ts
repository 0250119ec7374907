/**
 * Plain data of the goodput model (see docs/pollux-spec.md §3). Every function of goodput/ is
 * pure over these types: no I/O, no clock, no randomness.
 */

/**
 * The seven fitted parameters of the throughput model (pollux-spec §3.1). Times are seconds.
 * Invariant: alpha_* and beta_* are >= 1e-8; gamma is in [1, 10].
 */
export interface PerfParams {
  /** Fixed cost of one micro-step (s). */
  alpha_c: number;
  /** Cost per sample of one micro-step (s/sample). */
  beta_c: number;
  /** Inter-node synchronization: fixed part (s). */
  alpha_n: number;
  /** Inter-node synchronization: per extra replica (s). */
  beta_n: number;
  /** Intra-node synchronization: fixed part (s). */
  alpha_r: number;
  /** Intra-node synchronization: per extra replica (s). */
  beta_r: number;
  /** Compute/communication overlap exponent. */
  gamma: number;
}

/** Gradient statistics: squared norm sigma^2 (`sqr`) and variance nu normalized to B0 (`var`). */
export interface GradParams {
  sqr: number;
  var: number;
}

/** Batch-size limits of one job. Invariant: min_local_bsz <= max_local_bsz, init <= max. */
export interface BatchLimits {
  /** B0: the reference (initial) total batch size the learning rate was tuned for. */
  init_batch_size: number;
  /** Largest total batch size the job may use. */
  max_batch_size: number;
  /** Smallest per-GPU micro-batch. */
  min_local_bsz: number;
  /** Largest per-GPU micro-batch (memory bound). */
  max_local_bsz: number;
  /** Whether gradient accumulation may be used to reach larger totals. */
  accumulation: boolean;
}

/** One profiled configuration with its measured times (the input of the fit, §3.2). */
export interface ProfilePoint {
  num_nodes: number;
  num_replicas: number;
  local_bsz: number;
  /** Time of one accumulation micro-step, i.e. step time minus sync time (s). */
  accum_step_time_s: number;
  /** Time of one optimizer step including synchronization (s). */
  optim_step_time_s: number;
}

/** The configuration chosen for a placement, with its predicted goodput. */
export interface BatchChoice {
  /** Predicted goodput in B0-equivalent samples per second. 0 when infeasible. */
  goodput: number;
  /** Per-GPU micro-batch b. */
  local_bsz: number;
  /** Extra accumulation micro-steps a (each optimizer step runs a + 1 micro-steps). */
  accum_steps: number;
}

/** Measured over predicted step time at one measured local batch size. Invariant: factor > 0. */
export interface BatchFactor {
  local_bsz: number;
  factor: number;
}

/** Measured over predicted optimizer-step time at one measured shape, per local batch measured there. */
export interface ShapeFactor {
  num_nodes: number;
  num_replicas: number;
  /** Sorted by local_bsz, each measured local batch once; never empty. */
  by_batch: readonly BatchFactor[];
}

/**
 * Ratios of measured to predicted step times. Invariant: every factor is > 0; `shapes` is sorted
 * by (num_replicas, num_nodes) and holds each measured shape once; `compute` is sorted by
 * local_bsz and holds each measured local batch once.
 */
export interface StepCorrection {
  /** Measured / predicted micro-step (compute) time per local batch, over every shape. */
  compute: readonly BatchFactor[];
  shapes: readonly ShapeFactor[];
}

/** Everything needed to predict a job's goodput for any placement. */
export interface GoodputModel {
  perf: PerfParams;
  grad: GradParams;
  limits: BatchLimits;
  /** Measured corrections of `perf`'s step times (goodput/step-correction.ts); absent: none. */
  correction?: StepCorrection;
}
