/**
 * The one rule that splits a total batch into (per-GPU micro-batch, accumulation steps), shared by
 * the batch optimizer, the fixed-batch policies, the simulator, the control plane and (ported,
 * checked on the same cases by python/tests/test_batch_split_cases.py) the PyTorch SDK.
 */
import type { BatchLimits } from './types.js';

/** Per-GPU micro-batch `local_bsz` and extra accumulation micro-steps `accum_steps`. */
export interface LocalBatch {
  local_bsz: number;
  accum_steps: number;
}

/**
 * Tolerance of the original simulator's ceil operations: a share that is a whole number up to
 * float error does not round up. Needed for exact reproduction of the Pollux artifact.
 */
export const SPLIT_EPS = 1e-8;

/**
 * Splits `batch_size` samples per optimizer step over `num_replicas` GPUs (pollux-spec §1.6,
 * §3.4): the fewest micro-steps that keep the per-GPU batch within `max_local_bsz`, and at least
 * two micro-steps on a single replica training above B0 (so that its gradient noise can be
 * measured) or always on a single replica with `accumulateOnOne` (Optimus' oracle). Without
 * `accumulation` there is one micro-step and the micro-batch may exceed `max_local_bsz` (see
 * {@link capLocalBatch}). local_bsz = ceil(share / (a + 1) - 1e-8) with share = batch_size / r.
 * Pure; `batch_size` need not be whole (the optimizer's candidates are not).
 */
export function splitBatch(
  limits: BatchLimits,
  batch_size: number,
  num_replicas: number,
  accumulateOnOne = false,
): LocalBatch {
  const accum = splitAccumSteps(limits, batch_size, num_replicas, accumulateOnOne);
  return { local_bsz: splitLocalBsz(batch_size, num_replicas, accum), accum_steps: accum };
}

/** {@link splitBatch}'s accum_steps alone (no object: the batch search calls it millions of times a round). */
export function splitAccumSteps(
  limits: BatchLimits,
  batch_size: number,
  num_replicas: number,
  accumulateOnOne = false,
): number {
  if (!limits.accumulation) return 0;
  const accum = Math.ceil(batch_size / num_replicas / limits.max_local_bsz - SPLIT_EPS) - 1;
  return num_replicas === 1 && (accumulateOnOne || batch_size > limits.init_batch_size + SPLIT_EPS)
    ? Math.max(1, accum)
    : accum;
}

/** {@link splitBatch}'s local_bsz for `accum_steps` extra micro-steps. */
export function splitLocalBsz(batch_size: number, num_replicas: number, accum_steps: number): number {
  return Math.ceil(batch_size / num_replicas / (accum_steps + 1) - SPLIT_EPS);
}

/**
 * Keeps a split inside the job's limits: local_bsz <= floor(max_batch_size / (r (a + 1))) (the
 * original simulator's clamp), and <= max_local_bsz when accumulation is off (memory bound). The
 * micro-batch may end below 1 or `min_local_bsz`; callers that score it treat that as infeasible.
 */
export function capLocalBatch(limits: BatchLimits, split: LocalBatch, num_replicas: number): LocalBatch {
  let local_bsz = Math.min(
    split.local_bsz,
    Math.floor(limits.max_batch_size / (num_replicas * (split.accum_steps + 1))),
  );
  if (!limits.accumulation) local_bsz = Math.min(local_bsz, limits.max_local_bsz);
  return { local_bsz, accum_steps: split.accum_steps };
}

/** A fixed total batch on `num_replicas` GPUs: {@link splitBatch}, then {@link capLocalBatch}. */
export function splitFixedBatch(
  limits: BatchLimits,
  batch_size: number,
  num_replicas: number,
  accumulateOnOne = false,
): LocalBatch {
  return capLocalBatch(limits, splitBatch(limits, batch_size, num_replicas, accumulateOnOne), num_replicas);
}
