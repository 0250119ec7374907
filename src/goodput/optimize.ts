/**
 * Choice of the batch configuration for a placement (pollux-spec §3.4, artifact version):
 * 50 geometrically spaced total batch sizes, split into (per-GPU batch, accumulation steps),
 * scored by goodput = throughput x efficiency; the first best wins.
 */
import { SPLIT_EPS, splitBatch, splitFixedBatch } from './batch-split.js';
import { efficiency } from './efficiency.js';
import { correctedThroughput } from './step-correction.js';
import { throughput } from './throughput.js';
import type { BatchChoice, GoodputModel } from './types.js';

/** Number of candidate total batch sizes, as in the artifact. */
export const NUM_BATCH_CANDIDATES = 50;

/**
 * numpy `geomspace(start, stop, num)`: 10^(log10(start) + i * step) with the two endpoints
 * forced to exactly `start` and `stop`. Requires start, stop > 0.
 */
export function geomspace(start: number, stop: number, num: number): Float64Array {
  const out = new Float64Array(num);
  if (num <= 0) return out;
  const logStart = Math.log10(start);
  const logStop = Math.log10(stop);
  const div = num - 1;
  const step = div > 0 ? (logStop - logStart) / div : 0;
  for (let i = 0; i < num; i++) out[i] = Math.pow(10, i * step + logStart);
  out[0] = start;
  if (num > 1) out[num - 1] = stop;
  return out;
}

/** geomspace's candidates by minB, then maxB (bounded: cleared past 10,000 pairs). */
const CANDIDATES = new Map<number, Map<number, Float64Array>>();
let candidatePairs = 0;

/**
 * geomspace(minB, maxB, NUM_BATCH_CANDIDATES), kept by its bounds and shared (read-only) by every
 * caller: the policy values thousands of jobs of a few limits a round, and a simulated day asks
 * for the same few ranges millions of times (50 powers each time were a tenth of its jobs' batch
 * choices; bench:scale). Keyed by the numbers, not a string made of them.
 */
export function batchCandidates(minB: number, maxB: number): Float64Array {
  let byMax = CANDIDATES.get(minB);
  let candidates = byMax?.get(maxB);
  if (!candidates) {
    if (candidatePairs > 10_000) {
      CANDIDATES.clear();
      candidatePairs = 0;
      byMax = undefined;
    }
    if (!byMax) CANDIDATES.set(minB, (byMax = new Map()));
    byMax.set(maxB, (candidates = geomspace(minB, maxB, NUM_BATCH_CANDIDATES)));
    candidatePairs++;
  }
  return candidates;
}

/** Predicted goodput (B0-equivalent samples/s) of an explicit configuration. */
export function goodputOf(
  model: GoodputModel,
  num_nodes: number,
  num_replicas: number,
  local_bsz: number,
  accum_steps: number,
): number {
  const batch = num_replicas * local_bsz * (accum_steps + 1);
  const samples_per_s = model.correction
    ? correctedThroughput(model.perf, model.correction, num_nodes, num_replicas, local_bsz, accum_steps)
    : throughput(model.perf, num_nodes, num_replicas, local_bsz, accum_steps);
  return samples_per_s * efficiency(model.grad, model.limits.init_batch_size, batch);
}

/**
 * Best (goodput, per-GPU batch, accumulation steps) for `num_replicas` replicas on `num_nodes`
 * nodes. Candidates run from max(B0, min_local_bsz * r) to the maximum total batch
 * (`max_batch_size` if given, clamped to >= B0, else `model.limits.max_batch_size`), each split
 * by {@link splitBatch} (not capped: the split rounds the micro-batch up, so the total may pass the
 * maximum by up to num_replicas - 1 samples, as in the artifact). With `within_max` (what a live
 * job is told) the micro-batch is rounded down where that keeps the total within the maximum, as
 * capLocalBatch (batch-split.ts) does. Candidates whose b falls outside [min_local, max_local] score 0;
 * ties keep the first (smallest batch). Pure; requires 1 <= num_nodes <= num_replicas.
 */
export function optimizeBatch(
  model: GoodputModel,
  num_nodes: number,
  num_replicas: number,
  max_batch_size?: number,
  within_max = false,
): BatchChoice {
  const limits = model.limits;
  const B0 = limits.init_batch_size;
  const maxB = max_batch_size === undefined ? limits.max_batch_size : Math.max(B0, max_batch_size);
  const minB = Math.max(B0, limits.min_local_bsz * num_replicas);
  const candidates = batchCandidates(minB, maxB);
  let best: BatchChoice = { goodput: 0, local_bsz: 0, accum_steps: 0 };
  let bestGoodput = -Infinity;
  for (let i = 0; i < candidates.length; i++) {
    const split = splitBatch(limits, candidates[i] as number, num_replicas);
    const accum = split.accum_steps;
    const bsz = within_max
      ? Math.min(split.local_bsz, Math.floor(maxB / (num_replicas * (accum + 1)) + SPLIT_EPS))
      : split.local_bsz;
    let goodput = 0;
    if (bsz >= limits.min_local_bsz && bsz <= limits.max_local_bsz) {
      goodput = goodputOf(model, num_nodes, num_replicas, bsz, accum);
    }
    if (goodput > bestGoodput) {
      bestGoodput = goodput;
      best = { goodput, local_bsz: bsz, accum_steps: accum };
    }
  }
  return best;
}

/**
 * The configuration for a fixed total batch `batch_size` (pollux-spec §1.6, "fixed target"):
 * {@link splitFixedBatch}. Goodput is 0 when b < 1.
 */
export function fixedBatchChoice(
  model: GoodputModel,
  num_nodes: number,
  num_replicas: number,
  batch_size: number,
): BatchChoice {
  const { local_bsz, accum_steps } = splitFixedBatch(model.limits, batch_size, num_replicas);
  const goodput = local_bsz >= 1 ? goodputOf(model, num_nodes, num_replicas, local_bsz, accum_steps) : 0;
  return { goodput, local_bsz, accum_steps };
}
