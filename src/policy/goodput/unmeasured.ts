/**
 * How far a size is from what a job measured (docs/policy.md, "Decisions that need the gain to be
 * sure"): the resize rule widens a gain's interval by it (goodput/interval.ts widenBy), so that a
 * size the job never ran is not predicted as surely as one it did. Pure.
 */
import { measuredDistance, widenBy, type LogInterval } from '../../goodput/interval.js';
import { fixedBatchChoice, optimizeBatch } from '../../goodput/optimize.js';
import type { BatchPolicy } from '../../goodput/speedup.js';
import type { GoodputModel } from '../../goodput/types.js';

/** measuredDistance of (nodes, replicas) at the batch the model chooses there; memoized by the caller. */
export type SizeDistance = (num_nodes: number, num_replicas: number) => number;

/**
 * The distance of (n, r) from the configurations `model`'s correction measured, at the local batch
 * the goodput model would choose there (its fixed batch, else the best one within the cap): a
 * size is judged by the configuration it would run. Memoized per (n, r); 0 without a correction
 * (no residuals: the rule does not apply) or replicas.
 */
export function sizeDistanceFn(model: GoodputModel, batch: BatchPolicy): SizeDistance {
  const memo = new Map<number, number>();
  const correction = model.correction;
  return (num_nodes: number, num_replicas: number): number => {
    if (!correction || num_replicas <= 0) return 0;
    const key = num_nodes * 65536 + num_replicas;
    let d = memo.get(key);
    if (d === undefined) {
      const choice =
        batch.fixed_batch_size !== undefined
          ? fixedBatchChoice(model, num_nodes, num_replicas, batch.fixed_batch_size)
          : optimizeBatch(model, num_nodes, num_replicas, batch.max_batch_size);
      d = choice.local_bsz > 0 ? measuredDistance(correction, num_nodes, num_replicas, choice.local_bsz) : 0;
      if (!Number.isFinite(d)) d = 0;
      memo.set(key, d);
    }
    return d;
  };
}

/**
 * The interval of a resize's gain from `from` to `to` replicas: the job's residual interval
 * widened by the distances of both sizes from what it measured (the size in force is usually
 * measured: 0). Undefined without a residual interval.
 */
export function resizeInterval(
  base: LogInterval | undefined,
  distance: ((replicas: number) => number) | undefined,
  from: number,
  to: number,
): LogInterval | undefined {
  if (!base) return undefined;
  if (!distance || from === to) return base;
  return widenBy(base, distance(to) + distance(from));
}
