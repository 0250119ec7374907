/**
 * The planner: for each GPU type and count, the job's predicted throughput, statistical
 * efficiency, best batch configuration, memory fit, time to a target and its cost, with the same
 * goodput model and batch choice the policy uses (goodput/optimize.ts); then the answers
 * (fastest within a budget, cheapest within a deadline, the knee) and advice tied to the
 * prediction. Pure: no I/O.
 */
import { efficiency } from '../goodput/efficiency.js';
import { fixedBatchChoice, optimizeBatch } from '../goodput/optimize.js';
import { accumStepTime_s, optimStepTime_s, stepTime_s } from '../goodput/throughput.js';
import type { BatchLimits, GoodputModel, GradParams } from '../goodput/types.js';
import { deviceBytes, type Provenance, type TypeModel } from './plan-types.js';

/** What to plan for. */
export interface PlanRequest {
  /** GPU counts to predict, ascending. */
  gpus: readonly number[];
  /** Samples of training to reach (B0-equivalent when the gradient noise is known). */
  target_samples: number;
  deadline_s?: number;
  budget?: number;
  /** The knee is where doubling the GPUs buys less than this share of the ideal extra speed (default 0.5). */
  knee_share?: number;
}

/** One predicted configuration. */
export interface PlanRow {
  gpu_type: string;
  gpus: number;
  nodes: number;
  source: Provenance;
  /** Raw samples per second. */
  samples_per_s: number;
  /** Statistical efficiency of the chosen total batch (1 when the gradient noise is unknown). */
  efficiency: number;
  local_bsz: number;
  accum_steps: number;
  batch_size: number;
  /** Memory per GPU at the chosen local batch (bytes); null when not measured. */
  memory_per_gpu_bytes: number | null;
  /** false when not even the smallest local batch fits on the GPU. */
  fits: boolean;
  /** Share of a step spent in gradient synchronization that compute does not hide. */
  network_share: number;
  time_s: number;
  gpu_hours: number;
  /** null when the type has no price. */
  cost: number | null;
  advice: string[];
}

/** The answers over all rows. */
export interface PlanAnswers {
  fastest_within_budget: PlanRow | null;
  cheapest_within_deadline: PlanRow | null;
  /** Per type: the last GPU count before doubling buys less than `knee_share` of the ideal speed-up. */
  knee: { gpu_type: string; gpus: number }[];
}

const DEFAULT_KNEE_SHARE = 0.5;
/** Memory kept free on a GPU for the allocator's fragmentation and the framework (share of it). */
const MEMORY_HEADROOM = 0.9;
/** A network share above this means the network dominates the step. */
const NETWORK_BOUND = 0.3;
/** A network share below this means the step is compute-bound. */
const COMPUTE_BOUND = 0.15;

/** Largest local batch that fits in the type's memory by the memory profile; undefined when not measured. */
export function memoryFitLocalBatch(model: TypeModel): number | undefined {
  if (!model.memory || model.memory.per_sample_bytes <= 0) return undefined;
  return Math.floor(
    (deviceBytes(model.spec) * MEMORY_HEADROOM - model.memory.base_bytes) / model.memory.per_sample_bytes,
  );
}

/** Nodes of a packed placement of `gpus` GPUs on nodes of `gpus_per_node`. */
export function nodesFor(gpus: number, gpus_per_node: number): number {
  return Math.max(1, Math.ceil(gpus / gpus_per_node));
}

/** One row per GPU count of `request` for the type of `model`. */
export function planType(
  model: TypeModel,
  grad: GradParams | undefined,
  limits: BatchLimits,
  request: PlanRequest,
): PlanRow[] {
  const fit = memoryFitLocalBatch(model);
  const fits = fit === undefined || fit >= limits.min_local_bsz;
  const capped: BatchLimits =
    fit === undefined || !fits
      ? limits
      : { ...limits, max_local_bsz: Math.max(limits.min_local_bsz, Math.min(limits.max_local_bsz, fit)) };
  return request.gpus.map((gpus) => {
    const nodes = nodesFor(gpus, model.spec.gpus_per_node);
    const goodputModel: GoodputModel = { perf: model.perf, grad: grad ?? { sqr: 1, var: 0 }, limits: capped };
    if (model.correction && model.measured_shapes.length > 0) goodputModel.correction = model.correction;
    const choice = grad
      ? optimizeBatch(goodputModel, nodes, gpus)
      : fixedBatchChoice(goodputModel, nodes, gpus, Math.max(limits.init_batch_size, capped.min_local_bsz * gpus));
    const local_bsz = Math.max(choice.local_bsz, 1);
    const batch_size = gpus * local_bsz * (choice.accum_steps + 1);
    const eff = grad ? efficiency(grad, limits.init_batch_size, batch_size) : 1;
    const samples_per_s = eff > 0 && choice.goodput > 0 ? choice.goodput / eff : 0;
    const step_s = stepTime_s(model.perf, nodes, gpus, local_bsz, choice.accum_steps);
    const exposed_s = Math.max(
      optimStepTime_s(model.perf, nodes, gpus, local_bsz) - accumStepTime_s(model.perf, local_bsz),
      0,
    );
    const network_share = gpus > 1 && step_s > 0 ? exposed_s / step_s : 0;
    const goodput = samples_per_s * eff;
    const time_s = fits && goodput > 0 ? request.target_samples / goodput : Infinity;
    const gpu_hours = (time_s * gpus) / 3600;
    const price = model.spec.price_per_gpu_hour;
    const memory = model.memory ? model.memory.base_bytes + model.memory.per_sample_bytes * local_bsz : null;
    const source: Provenance = model.measured_shapes.includes(`${nodes}:${gpus}`)
      ? 'measured'
      : model.source === 'measured'
        ? 'estimated'
        : model.source;
    const row: PlanRow = {
      gpu_type: model.spec.name,
      gpus,
      nodes,
      source,
      samples_per_s,
      efficiency: eff,
      local_bsz,
      accum_steps: choice.accum_steps,
      batch_size,
      memory_per_gpu_bytes: memory,
      fits,
      network_share,
      time_s,
      gpu_hours,
      cost: price === null ? null : gpu_hours * price,
      advice: [],
    };
    row.advice = adviceFor(row, model, limits, fit);
    return row;
  });
}

/** Advice tied to a row's prediction (the guides' rules of thumb, each from a predicted quantity). */
export function adviceFor(row: PlanRow, model: TypeModel, limits: BatchLimits, fit: number | undefined): string[] {
  const advice: string[] = [];
  if (!row.fits) {
    advice.push(
      `memory binds: even local batch ${limits.min_local_bsz} needs more than ${model.spec.memory_gib} GiB; use activation checkpointing, a smaller model or a type with more memory`,
    );
    return advice;
  }
  if (fit !== undefined && fit < limits.max_local_bsz && row.local_bsz >= fit) {
    advice.push(
      `memory binds at local batch ${fit}: activation checkpointing (or a smaller local batch with accumulation) allows larger ones`,
    );
  }
  if (row.network_share >= NETWORK_BOUND) {
    advice.push(
      `network dominates (${Math.round(row.network_share * 100)}% of the step): gradient accumulation syncs less often per sample`,
    );
    if (row.nodes > 1 && row.gpus > model.spec.gpus_per_node / 2)
      advice.push(
        `stay on one node (${model.spec.gpus_per_node} GPUs) unless the speed-up is worth the cross-node traffic`,
      );
  } else if (row.network_share <= COMPUTE_BOUND && model.spec.fp16_tflops > 1.5 * model.spec.fp32_tflops) {
    advice.push(
      `compute-bound: mixed precision (bf16/fp16 autocast) can use the ${Math.round(model.spec.fp16_tflops / model.spec.fp32_tflops)}x faster tensor cores`,
    );
  }
  return advice;
}

/** Fastest within the budget, cheapest within the deadline, and the knee of each type. */
export function planAnswers(rows: readonly PlanRow[], request: PlanRequest): PlanAnswers {
  const feasible = rows.filter((r) => r.fits && Number.isFinite(r.time_s));
  const withinBudget = feasible.filter(
    (r) => request.budget === undefined || (r.cost !== null && r.cost <= request.budget),
  );
  const withinDeadline = feasible.filter(
    (r) => (request.deadline_s === undefined || r.time_s <= request.deadline_s) && r.cost !== null,
  );
  const fastest = best(withinBudget, (a, b) => a.time_s - b.time_s || (a.cost ?? Infinity) - (b.cost ?? Infinity));
  const cheapest = best(withinDeadline, (a, b) => (a.cost as number) - (b.cost as number) || a.time_s - b.time_s);
  const share = request.knee_share ?? DEFAULT_KNEE_SHARE;
  const types = [...new Set(feasible.map((r) => r.gpu_type))];
  const knee = types.map((gpu_type) => ({
    gpu_type,
    gpus: kneeOf(
      feasible.filter((r) => r.gpu_type === gpu_type),
      share,
    ),
  }));
  return { fastest_within_budget: fastest, cheapest_within_deadline: cheapest, knee };
}

/**
 * The knee of one type's rows (ascending GPU counts): the last count from which the next one
 * still buys at least `share` of the ideal extra speed, (speed-up - 1) / (GPU ratio - 1).
 */
export function kneeOf(rows: readonly PlanRow[], share: number): number {
  const sorted = [...rows].sort((a, b) => a.gpus - b.gpus);
  if (sorted.length === 0) return 0;
  for (let i = 0; i + 1 < sorted.length; i++) {
    const a = sorted[i]!;
    const b = sorted[i + 1]!;
    const gained = a.time_s / b.time_s - 1;
    const ideal = b.gpus / a.gpus - 1;
    if (gained < share * ideal) return a.gpus;
  }
  return sorted[sorted.length - 1]!.gpus;
}

function best<T>(xs: readonly T[], compare: (a: T, b: T) => number): T | null {
  let out: T | null = null;
  for (const x of xs) if (out === null || compare(x, out) < 0) out = x;
  return out;
}
