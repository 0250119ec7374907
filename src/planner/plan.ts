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
import { applyInterval } from './plan-interval.js';
import { deviceBytes, isCpuSpec, type Provenance, type TypeModel } from './plan-types.js';

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
  /**
   * Memory per GPU at the chosen local batch (bytes); null when not measured on a GPU (a CPU
   * profile's resident memory says nothing of a GPU's): `memory_note` then says how to measure it.
   */
  memory_per_gpu_bytes: number | null;
  /** The 80% interval of `memory_per_gpu_bytes`; null with it. */
  memory_interval_bytes: [number, number] | null;
  /** Why memory is not shown and how to measure it; absent when shown. */
  memory_note?: string;
  /** false when not even the smallest local batch fits on the GPU. */
  fits: boolean;
  /** Share of a step spent in gradient synchronization that compute does not hide. */
  network_share: number;
  time_s: number;
  /** The 80% interval of `time_s` (plan-interval.ts); both Infinity when the job does not fit. */
  time_interval_s: [number, number];
  /** What the interval rests on, and whether bench:plan measured its calibration. */
  interval_basis: string;
  interval_calibrated: boolean;
  gpu_hours: number;
  /** null when the type has no price (or is the nominal CPU slot, never priced as a GPU). */
  cost: number | null;
  /** The 80% interval of `cost`; null with it. */
  cost_interval: [number, number] | null;
  advice: string[];
}

/** The answers over all rows. */
export interface PlanAnswers {
  fastest_within_budget: PlanRow | null;
  cheapest_within_deadline: PlanRow | null;
  /** Per type: the last GPU count before doubling buys less than `knee_share` of the ideal speed-up. */
  knee: { gpu_type: string; gpus: number }[];
  /**
   * Answers whose 80% interval overlaps another GPU type's, so that the data cannot choose between
   * them, each with what to measure to narrow it; empty when every answer is clear.
   */
  undecided: Undecided[];
}

/**
 * An answer the intervals cannot settle: the chosen row, the other type's row that may beat it
 * (null when there is none but the chosen row's own interval is wider than {@link TOO_WIDE}), what
 * to measure.
 */
export interface Undecided {
  answer: 'fastest' | 'cheapest';
  chosen: PlanRow;
  rival: PlanRow | null;
  /** Measuring this many GPUs of this type for this long would replace the wider prediction by a measured one. */
  measure: { gpu_type: string; gpus: number; time_s: number };
}

/** An answer whose own 80% interval spans more than this factor (high / low) is not one to book on without measuring. */
export const TOO_WIDE = 2;

/** How long a measurement the planner asks for runs (s): 5 minutes, long enough for a sweep of a few batch sizes. */
export const MEASURE_TIME_S = 300;

const DEFAULT_KNEE_SHARE = 0.5;
/** Memory kept free on a GPU for the allocator's fragmentation and the framework (share of it). */
const MEMORY_HEADROOM = 0.9;
/** A network share above this means the network dominates the step. */
const NETWORK_BOUND = 0.3;
/** A network share below this means the step is compute-bound. */
const COMPUTE_BOUND = 0.15;

/**
 * Whether the model's memory profile speaks for its type: measured on a GPU (the allocator's peak)
 * for a GPU type, any for the CPU slot itself.
 */
export function memoryApplies(model: TypeModel): boolean {
  return model.memory !== undefined && (model.memory.source === 'allocator' || isCpuSpec(model.spec));
}

/** Largest local batch that fits in the type's memory by the memory profile; undefined when not measured ({@link memoryApplies}). */
export function memoryFitLocalBatch(model: TypeModel): number | undefined {
  if (!model.memory || !memoryApplies(model) || model.memory.per_sample_bytes <= 0) return undefined;
  return Math.floor(
    (deviceBytes(model.spec) * MEMORY_HEADROOM - model.memory.base_bytes) / model.memory.per_sample_bytes,
  );
}

/** Nodes of a packed placement of `gpus` GPUs on nodes of `gpus_per_node`. */
export function nodesFor(gpus: number, gpus_per_node: number): number {
  return Math.max(1, Math.ceil(gpus / gpus_per_node));
}

/**
 * The GPU counts to predict for a model: all of the request's, but for the nominal CPU slot only
 * those up to the most it measured on one node (CPU slots are not extrapolated, least of all
 * across nodes: the nominal entry's node size is made up).
 */
export function countsFor(model: TypeModel, gpus: readonly number[]): number[] {
  if (!isCpuSpec(model.spec)) return [...gpus];
  const measured = model.measured_shapes
    .map((s) => s.split(':').map(Number))
    .filter(([n]) => n === 1)
    .map(([, r]) => r ?? 0);
  const most = Math.max(0, ...measured);
  return gpus.filter((g) => g <= most);
}

/** One row per GPU count of `request` ({@link countsFor}) for the type of `model`. */
export function planType(
  model: TypeModel,
  grad: GradParams | undefined,
  limits: BatchLimits,
  request: PlanRequest,
): PlanRow[] {
  const cpu = isCpuSpec(model.spec);
  const fit = memoryFitLocalBatch(model);
  const fits = fit === undefined || fit >= limits.min_local_bsz;
  const capped: BatchLimits =
    fit === undefined || !fits
      ? limits
      : { ...limits, max_local_bsz: Math.max(limits.min_local_bsz, Math.min(limits.max_local_bsz, fit)) };
  return countsFor(model, request.gpus).map((gpus) => {
    const nodes = cpu ? 1 : nodesFor(gpus, model.spec.gpus_per_node);
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
    const price = cpu ? null : model.spec.price_per_gpu_hour;
    const memory =
      model.memory && memoryApplies(model) ? model.memory.base_bytes + model.memory.per_sample_bytes * local_bsz : null;
    const atMeasured = model.measured_shapes.includes(`${nodes}:${gpus}`);
    const source: Provenance = atMeasured ? 'measured' : model.source === 'measured' ? 'estimated' : model.source;
    const basis = atMeasured ? model.interval : model.unmeasured_interval;
    const time_interval_s = applyInterval(time_s, basis.interval);
    const cost = price === null ? null : gpu_hours * price;
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
      memory_interval_bytes: memory === null || !model.memory ? null : applyInterval(memory, model.memory.interval),
      fits,
      network_share,
      time_s,
      time_interval_s,
      interval_basis: basis.basis,
      interval_calibrated: basis.calibrated,
      gpu_hours,
      cost,
      cost_interval: cost === null ? null : applyInterval(cost, basis.interval),
      advice: [],
    };
    if (memory === null) row.memory_note = memoryNote(model);
    row.advice = adviceFor(row, model, limits, fit);
    return row;
  });
}

/** Why a row shows no memory, and how to measure it. */
function memoryNote(model: TypeModel): string {
  const how = `measure it on a GPU of the type: 'goodput profile --gpus 1 -- <command>' on a machine with ${model.spec.name} GPUs`;
  return model.memory
    ? `GPU memory unknown: the profile measured a CPU's resident memory; ${how}`
    : `memory not measured; ${how}`;
}

/** Advice tied to a row's prediction (the guides' rules of thumb, each from a predicted quantity). */
export function adviceFor(row: PlanRow, model: TypeModel, limits: BatchLimits, fit: number | undefined): string[] {
  const advice: string[] = [];
  if (!row.fits) {
    advice.push(
      `memory binds: even local batch ${limits.min_local_bsz} needs more than ` +
        `${model.spec.memory_gib} GiB; use activation checkpointing, a smaller model or a type ` +
        `with more memory`,
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
      `compute-bound: mixed precision (bf16/fp16 autocast) can use the ` +
        `${Math.round(model.spec.fp16_tflops / model.spec.fp32_tflops)}x faster tensor cores`,
    );
  }
  return advice;
}

/** Fastest within the budget, cheapest within the deadline, and the knee of each type. */
export function planAnswers(rows: readonly PlanRow[], request: PlanRequest): PlanAnswers {
  // The nominal CPU slot is shown (it is what was measured) but never recommended as a GPU type.
  const feasible = rows.filter((r) => r.fits && Number.isFinite(r.time_s) && r.gpu_type.toLowerCase() !== 'cpu');
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
  // A rival need only possibly meet the constraint: the low end of its interval within it.
  const mayBeWithinBudget = feasible.filter(
    (r) => request.budget === undefined || (r.cost_interval !== null && r.cost_interval[0] <= request.budget),
  );
  const mayBeWithinDeadline = feasible.filter(
    (r) => (request.deadline_s === undefined || r.time_interval_s[0] <= request.deadline_s) && r.cost !== null,
  );
  const undecided: Undecided[] = [];
  const fastRival = fastest && rivalOf(fastest, mayBeWithinBudget, (r) => r.time_interval_s);
  if (fastest && (fastRival || tooWide(fastest))) undecided.push(undecidedOf('fastest', fastest, fastRival));
  const cheapRival = cheapest && rivalOf(cheapest, mayBeWithinDeadline, (r) => r.cost_interval);
  if (cheapest && (cheapRival || tooWide(cheapest))) undecided.push(undecidedOf('cheapest', cheapest, cheapRival));
  return { fastest_within_budget: fastest, cheapest_within_deadline: cheapest, knee, undecided };
}

/** Whether a row's own time interval spans more than {@link TOO_WIDE} (a measured row's never counts: measuring again would not narrow it). */
function tooWide(row: PlanRow): boolean {
  return row.source !== 'measured' && row.time_interval_s[1] > TOO_WIDE * row.time_interval_s[0];
}

/**
 * The best row of another GPU type by the answer's quantity whose 80% interval reaches below the
 * chosen row's upper bound (so it may be the better choice); null when none does.
 */
export function rivalOf(
  chosen: PlanRow,
  rows: readonly PlanRow[],
  interval: (r: PlanRow) => [number, number] | null,
): PlanRow | null {
  const hi = interval(chosen)?.[1];
  if (hi === undefined) return null;
  const others = rows.filter((r) => r.gpu_type !== chosen.gpu_type && (interval(r)?.[0] ?? Infinity) < hi);
  return best(others, (a, b) => (interval(a) as [number, number])[0] - (interval(b) as [number, number])[0]);
}

/**
 * What to measure: the row whose prediction is least sure (not measured, widest interval; ties: the
 * chosen one), on 2 GPUs (one and two replicas).
 */
function undecidedOf(answer: Undecided['answer'], chosen: PlanRow, rival: PlanRow | null): Undecided {
  const width = (r: PlanRow): number => (r.source === 'measured' ? 0 : r.time_interval_s[1] / r.time_interval_s[0]);
  const target = rival && width(rival) > width(chosen) ? rival : chosen;
  return { answer, chosen, rival, measure: { gpu_type: target.gpu_type, gpus: 2, time_s: MEASURE_TIME_S } };
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
