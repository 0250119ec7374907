/**
 * Choice of the batch configuration for a placement (pollux-spec §3.4, artifact version):
 * 50 geometrically spaced total batch sizes, split into (per-GPU batch, accumulation steps),
 * scored by goodput = throughput x efficiency; the first best wins.
 */
import { SPLIT_EPS, splitAccumSteps, splitFixedBatch, splitLocalBsz } from './batch-split.js';
import { efficiency } from './efficiency.js';
import { computeFactor, correctedThroughput, optimFactor } from './step-correction.js';
import { accumStepTime_s, optimStepTime_s, samplesPerSecond, throughput } from './throughput.js';
import type { BatchChoice, GoodputModel, GradParams } from './types.js';

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
 * A placement's candidate configurations and their predicted throughputs: the part of
 * {@link optimizeBatch} that does not read the gradient statistics. Entry i is candidate i's
 * split (local_bsz, accum_steps) and samples/s; `in_limits[i]` is 0 where its micro-batch falls
 * outside [min_local, max_local] (it scores 0, its samples/s unread). A job whose fit and
 * placement stay while its statistics move (a simulated job re-picks its batch at every epoch)
 * keeps its table.
 */
export interface BatchTable {
  readonly local_bsz: Float64Array;
  readonly accum_steps: Float64Array;
  readonly samples_per_s: Float64Array;
  readonly in_limits: Uint8Array;
  readonly num_replicas: number;
}

/** An empty table of NUM_BATCH_CANDIDATES entries. */
function emptyTable(): { -readonly [K in keyof BatchTable]: BatchTable[K] } {
  return {
    local_bsz: new Float64Array(NUM_BATCH_CANDIDATES),
    accum_steps: new Float64Array(NUM_BATCH_CANDIDATES),
    samples_per_s: new Float64Array(NUM_BATCH_CANDIDATES),
    in_limits: new Uint8Array(NUM_BATCH_CANDIDATES),
    num_replicas: 0,
  };
}

/**
 * {@link optimizeBatch}'s candidates and their throughputs under `model`'s fit (its gradient
 * statistics unread): a new table, or `into` filled (optimizeBatch's scratch).
 */
export function batchTable(
  model: GoodputModel,
  num_nodes: number,
  num_replicas: number,
  max_batch_size?: number,
  within_max = false,
  into = emptyTable(),
): BatchTable {
  const limits = model.limits;
  const B0 = limits.init_batch_size;
  const maxB = max_batch_size === undefined ? limits.max_batch_size : Math.max(B0, max_batch_size);
  const minB = Math.max(B0, limits.min_local_bsz * num_replicas);
  const candidates = batchCandidates(minB, maxB);
  const n = candidates.length;
  const table = into;
  table.num_replicas = num_replicas;
  // Neighbouring candidates often split to the same micro-batch (more accumulation steps): its
  // step times are then those just computed (what goodputOf computes, term for term).
  let timedBsz = NaN;
  let accum_s = 0;
  let optim_s = 0;
  for (let i = 0; i < n; i++) {
    // splitBatch's two numbers without its object.
    const accum = splitAccumSteps(limits, candidates[i] as number, num_replicas);
    const local_bsz = splitLocalBsz(candidates[i] as number, num_replicas, accum);
    const bsz = within_max
      ? Math.min(local_bsz, Math.floor(maxB / (num_replicas * (accum + 1)) + SPLIT_EPS))
      : local_bsz;
    table.local_bsz[i] = bsz;
    table.accum_steps[i] = accum;
    table.in_limits[i] = 0;
    if (bsz < limits.min_local_bsz || bsz > limits.max_local_bsz) continue;
    if (bsz !== timedBsz) {
      timedBsz = bsz;
      accum_s = accumStepTime_s(model.perf, bsz);
      optim_s = optimStepTime_s(model.perf, num_nodes, num_replicas, bsz);
      if (model.correction) {
        accum_s *= computeFactor(model.correction, bsz);
        optim_s *= optimFactor(model.correction, num_nodes, num_replicas, bsz);
      }
    }
    table.in_limits[i] = 1;
    table.samples_per_s[i] = samplesPerSecond(num_replicas, bsz, accum, accum_s, optim_s);
  }
  return table;
}

/**
 * The best entry of `table` under gradient statistics `grad` (goodput = samples/s x efficiency,
 * as goodputOf); entries out of limits score 0; ties keep the first (smallest batch).
 */
export function bestInTable(table: BatchTable, grad: GradParams, init_batch_size: number): BatchChoice {
  // The best entry's index, its choice made once at the end (a simulated day asks for millions).
  let best = -1;
  let bestGoodput = -Infinity;
  const r = table.num_replicas;
  for (let i = 0; i < table.local_bsz.length; i++) {
    const bsz = table.local_bsz[i] as number;
    const accum = table.accum_steps[i] as number;
    const goodput =
      table.in_limits[i] === 1
        ? (table.samples_per_s[i] as number) * efficiency(grad, init_batch_size, r * bsz * (accum + 1))
        : 0;
    if (goodput > bestGoodput) {
      bestGoodput = goodput;
      best = i;
    }
  }
  return best < 0
    ? { goodput: 0, local_bsz: 0, accum_steps: 0 }
    : { goodput: bestGoodput, local_bsz: table.local_bsz[best]!, accum_steps: table.accum_steps[best]! };
}

/**
 * optimizeBatch's table, filled and read within one synchronous call: a choice made once
 * allocates nothing (four arrays per call made optimizeBatch two thirds slower for the control
 * plane's callers, which choose once per report or speedup).
 */
const SCRATCH = emptyTable();

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
  const table = batchTable(model, num_nodes, num_replicas, max_batch_size, within_max, SCRATCH);
  return bestInTable(table, model.grad, model.limits.init_batch_size);
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
