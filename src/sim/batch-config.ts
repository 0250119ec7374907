import type { BatchLimits } from '../goodput/types.js';

/** Per-GPU micro-batch `local_bsz` and extra accumulation steps `accum_steps`. */
export interface LocalBatch {
  local_bsz: number;
  accum_steps: number;
}

/**
 * Splits a fixed total batch `target` over `num_replicas` GPUs (pollux-spec §1.6): the smallest
 * number of micro-steps that keeps the per-GPU batch within max_local_bsz, with at least two
 * micro-steps for a single replica training above B0 (`forceAccumOnOne` = Optimus' oracle rule:
 * always at least two on one replica). The 1e-8 epsilons and the final clamp to max_batch_size
 * are the original simulator's and are needed for exact reproduction.
 */
export function splitFixedBatch(limits: BatchLimits, target: number, num_replicas: number, forceAccumOnOne = false): LocalBatch {
  const local = Math.ceil(target / num_replicas - 1e-8);
  let accum = Math.ceil(local / limits.max_local_bsz - 1e-8) - 1;
  if (num_replicas === 1 && (forceAccumOnOne || target > limits.init_batch_size)) accum = Math.max(1, accum);
  const b = Math.ceil(local / (accum + 1) - 1e-8);
  return { local_bsz: clampToMax(limits, b, num_replicas, accum), accum_steps: accum };
}

/** The original's final clamp: b <= floor(max_batch_size / (r (a + 1))). */
export function clampToMax(limits: BatchLimits, local_bsz: number, num_replicas: number, accum_steps: number): number {
  return Math.min(local_bsz, Math.trunc(limits.max_batch_size / (num_replicas * (accum_steps + 1))));
}

/** Packs `num_replicas` GPUs onto as few nodes as possible: (g, g, ..., rest). */
export function packedPlacement(num_replicas: number, gpus_per_node: number): number[] {
  const out: number[] = [];
  let left = num_replicas;
  while (left > 0) {
    const take = Math.min(left, gpus_per_node);
    out.push(take);
    left -= take;
  }
  return out;
}

/** Python's round() on a float: nearest integer, ties to even. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}
