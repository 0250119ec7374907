/**
 * Speedup functions (pollux-spec §4.1): how much faster a job progresses on (n nodes, r
 * replicas) than on its base configuration, measured in goodput.
 */
import { fixedBatchChoice, optimizeBatch } from './optimize.js';
import type { GoodputModel } from './types.js';

/** Speedup of a job on `num_nodes` nodes with `num_replicas` replicas; 0 for (0, 0). */
export type SpeedupFn = (num_nodes: number, num_replicas: number) => number;

/** How a job's batch size is chosen when predicting its goodput. */
export interface BatchPolicy {
  /** Fixed total batch size: no batch-size optimization (pollux-spec §1.6 fixed rule). */
  fixed_batch_size?: number;
  /** Cap on the total batch size the optimizer may choose (default: the model's limit). */
  max_batch_size?: number;
}

/**
 * A job's best predicted goodput at (num_nodes, num_replicas) with its batch chosen as `batch`
 * says: {@link bestGoodput}, or a cheaper search that never answers above it
 * (policy/goodput/scale.ts approxBestGoodput). 0 for no replicas.
 */
export type BestGoodputFn = (
  model: GoodputModel,
  num_nodes: number,
  num_replicas: number,
  batch?: BatchPolicy,
) => number;

/**
 * Best predicted goodput at (num_nodes, num_replicas): the §3.4 optimization, or the goodput of
 * the fixed-batch configuration when `batch.fixed_batch_size` is set. 0 for no replicas.
 */
export function bestGoodput(
  model: GoodputModel,
  num_nodes: number,
  num_replicas: number,
  batch: BatchPolicy = {},
): number {
  if (num_replicas <= 0) return 0;
  if (batch.fixed_batch_size !== undefined) {
    return fixedBatchChoice(model, num_nodes, num_replicas, batch.fixed_batch_size).goodput;
  }
  return optimizeBatch(model, num_nodes, num_replicas, batch.max_batch_size).goodput;
}

/**
 * Goodput-based speedup: bestGoodput(n, r) / base_goodput, memoized per instance (so build a
 * fresh one whenever the model changes). `base_goodput` defaults to the best goodput at
 * (1 node, 1 replica), as in the artifact's SpeedupFunction; the Pollux policy passes the
 * fair-share goodput instead. Requires base_goodput > 0. speedup(0, 0) = 0.
 */
export function goodputSpeedupFn(model: GoodputModel, base_goodput?: number, batch: BatchPolicy = {}): SpeedupFn {
  const base = base_goodput ?? bestGoodput(model, 1, 1, batch);
  return memoizedSpeedupFn((n, r) => bestGoodput(model, n, r, batch) / base);
}

/**
 * A model's best goodput on one GPU under `best` (bestGoodput, or a cheaper search that never
 * answers above it) and its speedup over it, not memoized (for callers that keep the values
 * themselves): speedup(1, 1) is one_gpu / one_gpu, known without a second search (with a model
 * per job, 40,000 jobs made a tenth of a first round's searches twice; issue #49). `fn` is
 * meaningful where one_gpu > 0; callers fall back to a linear speedup otherwise. `one_gpu`, where
 * given, is that best goodput known already (a saved memo: memo-bank.ts), not searched again.
 */
export function oneGpuSpeedup(
  model: GoodputModel,
  batch: BatchPolicy,
  best: BestGoodputFn = bestGoodput,
  one_gpu = best(model, 1, 1, batch),
): { one_gpu: number; fn: SpeedupFn } {
  const fn = (num_nodes: number, num_replicas: number): number =>
    num_replicas <= 0
      ? 0
      : num_nodes === 1 && num_replicas === 1
        ? one_gpu / one_gpu
        : best(model, num_nodes, num_replicas, batch) / one_gpu;
  return { one_gpu, fn };
}

/**
 * `speedup` memoized per (nodes, replicas), 0 for no replicas: the shape of every goodput-based
 * speedup function (one instance per model, as the memo never forgets).
 */
export function memoizedSpeedupFn(speedup: (num_nodes: number, num_replicas: number) => number): SpeedupFn {
  const memo = new Map<number, number>();
  return (num_nodes: number, num_replicas: number): number => {
    if (num_replicas <= 0) return 0;
    const key = num_nodes * 65536 + num_replicas;
    let value = memo.get(key);
    if (value === undefined) {
      value = speedup(num_nodes, num_replicas);
      memo.set(key, value);
    }
    return value;
  };
}

/**
 * Fallback for jobs without a fitted model: perfect linear scaling relative to
 * `base_replicas` replicas, r / base_replicas (the artifact uses r before rebasing and
 * r / r_fair inside the Pollux policy).
 */
export function linearSpeedupFn(base_replicas = 1): SpeedupFn {
  return (_num_nodes: number, num_replicas: number): number => num_replicas / base_replicas;
}
