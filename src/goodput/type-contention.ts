/**
 * A job's time on a target GPU type when several of its GPUs share a node, from the contention
 * its reference profile shows. Two kinds, told apart by the job's reference rows:
 * - host-bound (its micro-step on one node is, in the median, more than {@link
 *   HOST_BOUND_CONTENTION} longer than on one GPU): the GPUs wait for work the node's host does
 *   for all of them (data loading, CPU work); a faster GPU does not shorten it, so the step of
 *   one reference node with as many GPUs is a floor in seconds under the whole step ({@link
 *   hostFloorCurve}): the host prepares the next batches while the GPUs compute and synchronize,
 *   so the GPUs' step hides behind it rather than adding to it;
 * - otherwise, where a shape and batch still slow down by more than that on the reference (on
 *   Sia's traces: deepspeech2 at small batches, whose replicas wait for the slowest one): the
 *   slowdown moves with the compute, as a ratio ({@link relativeContentionCurve}, {@link
 *   contendedComputeCurve}).
 * A third floor, for a job that is not host-bound: where its one-GPU step is mostly per-step host work on both types,
 * its reference's one-node contention of that work bounds its step on the target ({@link hostLimitedFloorCurve}).
 * Read only from the job's reference rows and its one-GPU target rows, never its multi-GPU target
 * rows. Pure and deterministic: no I/O, no clock, no randomness.
 */
import { computeTime_s, median, oneGpuComputeCurve, shapeCurve, type StepPredictor } from './type-curves.js';
import type { TypeMeasurement } from './type-measurement.js';

/**
 * Contention that counts: a job is host-bound on the reference when the median, over its
 * multi-GPU rows on one node, of their micro-step over its one-GPU micro-step at the same batch
 * exceeds 1 + this; a shape and batch of a job that is not slows down when its ratio does. On
 * Sia's aws traces the jobs that are not host-bound sit at 0.95-1.06 in the median, the
 * host-bound one (yolov3) at 1.12.
 */
export const HOST_BOUND_CONTENTION = 0.1;

/**
 * The contention model's two thresholds, as parameters so that bench:plan can choose them on
 * held-in GPU types only (its leave-one-type-out protocol). Invariant: both > 0; Infinity turns
 * the part off (no job host-bound, no shape contended; no batch host-limited).
 */
export interface ContentionKnobs {
  /** {@link HOST_BOUND_CONTENTION}. */
  host_bound_contention: number;
  /** {@link HOST_LIMITED_SHARE}. */
  host_limited_share: number;
}

/** GPUs per node of a row: its placement's largest entry, else replicas over nodes rounded up. */
const gpusPerNode = (m: TypeMeasurement): number =>
  m.placement ? Math.max(...m.placement) : Math.ceil(m.num_replicas / m.num_nodes);

/** Micro-step over one-GPU micro-step at the batch, per multi-GPU reference row on one node; undefined without one-GPU rows. */
function oneNodeContention(
  reference: readonly TypeMeasurement[],
): { num_replicas: number; local_bsz: number; ratio: number }[] | undefined {
  const oneGpu = oneGpuComputeCurve(reference);
  if (!oneGpu) return undefined;
  return reference
    .filter((m) => m.num_replicas > 1 && m.num_nodes === 1)
    .map((m) => ({
      num_replicas: m.num_replicas,
      local_bsz: m.local_bsz,
      ratio: computeTime_s(m) / oneGpu(m.local_bsz),
    }));
}

/** Whether a job's one-node contention rows ({@link oneNodeContention}) make it host-bound ({@link HOST_BOUND_CONTENTION}). */
function hostBoundRows(rows: { ratio: number }[] | undefined, knobs: ContentionKnobs): boolean {
  return rows !== undefined && rows.length > 0 && median(rows.map((r) => r.ratio)) > 1 + knobs.host_bound_contention;
}

/** Whether the job is host-bound on the reference ({@link HOST_BOUND_CONTENTION}). */
export function isHostBound(
  reference: readonly TypeMeasurement[],
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): boolean {
  return hostBoundRows(oneNodeContention(reference), knobs);
}

/**
 * A floor under a host-bound job's step on any type ({@link isHostBound}; undefined for another
 * job): the reference's one-node step (sync included) with as many GPUs as the shape puts on a
 * node. Host work is done per node, for that node's GPUs, whatever the number of nodes; on one
 * node the network cannot mask it, whereas on several the replicas' wait for the slowest host
 * shows up as sync (on Sia's aws traces yolov3's micro-step over two nodes, 0.25-0.27 s at batch
 * 4, is no longer than on one GPU, 0.27 s, and shorter than on one node of 4, 0.34 s). The sync
 * is kept because on the reference it is largely that wait: yolov3's one-node sync on aws swings
 * 0.04-0.12 s with the batch while its gradient stays the same size. One GPU per node has no
 * floor (the job's one-GPU rows on the target already hold its host work there). A target node
 * with more GPUs than any reference node has more host work to do: the floor grows with the GPUs
 * per node as the job's one-node contention does on the reference, extended linearly (never
 * falling) from its two largest GPU counts (1 GPU counting as contention 1). On Sia's traces aws
 * nodes hold 4 GPUs, A100 nodes 8.
 * The floor bounds the step, compute and network together, not the compute alone: the host
 * (data-loader workers) prepares the next batches while the GPUs compute and synchronize, so a
 * network that fits within the host's time hides behind it.
 */
export function hostFloorCurve(
  reference: readonly TypeMeasurement[],
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): StepPredictor | undefined {
  const rows = oneNodeContention(reference);
  if (!rows || !hostBoundRows(rows, knobs)) return undefined;
  const oneNodeStep = shapeCurve(
    reference.filter((m) => m.num_nodes === 1),
    (m) => m.step_time_s,
  );
  const contentionAt = contentionByGpus(rows) as (g: number) => number;
  const referenceGpusPerNode = Math.max(...reference.map(gpusPerNode));
  return (num_nodes, num_replicas, local_bsz) => {
    const perNode = Math.ceil(num_replicas / num_nodes);
    const floor_s = perNode < 2 ? undefined : oneNodeStep(1, perNode, local_bsz);
    if (floor_s === undefined || perNode <= referenceGpusPerNode) return floor_s;
    return (floor_s * contentionAt(perNode)) / contentionAt(referenceGpusPerNode);
  };
}

/**
 * A job's one-node contention as a function of its GPUs per node, from rows of (GPUs, micro-step ratio): the median ratio
 * at the nearest measured count (1 GPU counting as contention 1), and past the largest count extended linearly (never
 * falling) from the two largest. Undefined without rows.
 */
function contentionByGpus(
  rows: readonly { num_replicas: number; ratio: number }[],
): ((g: number) => number) | undefined {
  if (rows.length === 0) return undefined;
  const counts = [1, ...new Set(rows.map((r) => r.num_replicas))].sort((a, b) => a - b);
  const ratios = counts.map((g) =>
    g === 1 ? 1 : median(rows.filter((r) => r.num_replicas === g).map((r) => r.ratio)),
  );
  const last = counts.length - 1;
  const top = counts[last] as number;
  const slope = Math.max(
    ((ratios[last] as number) - (ratios[last - 1] as number)) / (top - (counts[last - 1] as number)),
    0,
  );
  return (g) => {
    if (g > top) return (ratios[last] as number) + slope * (g - top);
    let best = 0;
    for (let i = 1; i < counts.length; i++)
      if (Math.abs((counts[i] as number) - g) < Math.abs((counts[best] as number) - g)) best = i;
    return ratios[best] as number;
  };
}

/**
 * How much of a one-GPU step must be per-step work, independent of the batch, for a job to count as host-limited at that
 * batch (on either type): 3/4. With a step t = a + k b (fixed work a, per-sample work k b), the local log-log slope of
 * the one-GPU curve is k b / t, so 1 minus the slope is the fixed share a / t ({@link perStepShare}). A step that is
 * mostly fixed work does not grow when the GPU gets more to do: the GPU's work hides behind the host's per-step work
 * (the Python loop, kernel launches, the data loader), which a faster GPU does not shorten.
 */
export const HOST_LIMITED_SHARE = 0.75;

/** The thresholds the planner uses: {@link HOST_BOUND_CONTENTION} and {@link HOST_LIMITED_SHARE}. */
export const DEFAULT_CONTENTION: ContentionKnobs = {
  host_bound_contention: HOST_BOUND_CONTENTION,
  host_limited_share: HOST_LIMITED_SHARE,
};

/**
 * The per-step (batch-independent) share of a one-GPU step at `local_bsz`: 1 minus the log-log slope of `curve` over
 * half an octave each side (Sia's profiles space their batches by a factor of about sqrt 2, so this spans the measured
 * neighbours), clamped to [0, 1].
 */
export function perStepShare(curve: (local_bsz: number) => number, local_bsz: number): number {
  const slope = Math.log(curve(local_bsz * Math.SQRT2) / curve(local_bsz / Math.SQRT2)) / Math.log(2);
  return Math.min(Math.max(1 - slope, 0), 1);
}

/**
 * A floor under the step, on the target, of a job whose one-GPU step is host-limited there ({@link HOST_LIMITED_SHARE})
 * and that is not host-bound on the reference ({@link hostFloorCurve} covers those): at a shape with g >= 2 GPUs per
 * node and a batch where the job's one-GPU curve on the target is host-limited, its one-GPU compute on the target times
 * its contention on one reference node of g GPUs, measured only on the reference rows at batches where the job is
 * host-limited on the reference too ({@link contentionByGpus}, extended past the reference's largest node as the host
 * floor is). Why: per-step host work is done by each GPU's process on the node's shared CPUs, so it slows down as
 * processes are added to a node; a job whose one-GPU step on the target is that host work then slows down with its
 * GPUs per node, which neither its one-GPU rows there nor a network model show (on Sia's traces: ncf, 9-11 ms flat on
 * the A100 nodes from batch 32 to 32768, its one-node step from 0.91 of that on 2 GPUs to 1.14 on 8). The reference's
 * contention of that work shows only where the reference's step is host work too: at the batches where the reference
 * is GPU-bound the ratio measures other things (a per-sample data loader, the GPU's memory), which do not carry. No
 * floor where the reference is never host-limited, where the job's relative contention applies ({@link
 * relativeContentionCurve}: that slowdown already moves with the compute), or at one GPU per node. Undefined when no
 * floor can apply. Reads only the job's reference rows and its one-GPU target rows.
 */
export function hostLimitedFloorCurve(
  reference: readonly TypeMeasurement[],
  targetOneGpu: readonly TypeMeasurement[],
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): StepPredictor | undefined {
  const onReference = oneGpuComputeCurve(reference);
  const onTarget = oneGpuComputeCurve(targetOneGpu);
  const all = oneNodeContention(reference);
  if (!onReference || !onTarget || !all || hostBoundRows(all, knobs)) return undefined;
  const contentionAt = contentionByGpus(
    all.filter((r) => perStepShare(onReference, r.local_bsz) >= knobs.host_limited_share),
  );
  if (!contentionAt) return undefined;
  const relative = relativeContentionCurve(reference, knobs);
  return (num_nodes, num_replicas, local_bsz) => {
    const perNode = Math.ceil(num_replicas / num_nodes);
    if (perNode < 2 || perStepShare(onTarget, local_bsz) < knobs.host_limited_share) return undefined;
    if ((relative?.(num_nodes, num_replicas, local_bsz) ?? 1) !== 1) return undefined;
    return onTarget(local_bsz) * contentionAt(perNode);
  };
}

/**
 * For a job that is not host-bound: its reference micro-step over its one-GPU micro-step at the
 * nearest shape and the batch ({@link shapeCurve}) where that exceeds 1 + {@link
 * HOST_BOUND_CONTENTION}, else 1 (below it, the ratio is within the traces' noise, and a faster
 * type's multi-GPU micro-steps run at 0.85-0.97 of one GPU's). Undefined for a host-bound job or
 * without one-GPU reference rows.
 */
export function relativeContentionCurve(
  reference: readonly TypeMeasurement[],
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): StepPredictor | undefined {
  const oneGpu = oneGpuComputeCurve(reference);
  if (!oneGpu || isHostBound(reference, knobs)) return undefined;
  const ratio = shapeCurve(reference, (m) => computeTime_s(m) / oneGpu(m.local_bsz));
  return (num_nodes, num_replicas, local_bsz) => {
    const r = ratio(num_nodes, num_replicas, local_bsz);
    return r !== undefined && r > 1 + knobs.host_bound_contention ? r : 1;
  };
}

/**
 * The job's GPU compute (s) on the target at a shape and batch: its one-GPU compute there ({@link
 * oneGpuComputeCurve} of its one-GPU target rows), on several GPUs times its relative contention.
 * A host-bound job's floor is not applied here: it bounds the whole step ({@link hostFloorCurve};
 * type-transfer.ts applies it after the network is overlapped). Undefined without one-GPU target
 * rows.
 */
export function contendedComputeCurve(
  reference: readonly TypeMeasurement[],
  targetOneGpu: readonly TypeMeasurement[],
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): ((num_nodes: number, num_replicas: number, local_bsz: number) => number) | undefined {
  const oneGpu = oneGpuComputeCurve(targetOneGpu);
  if (!oneGpu) return undefined;
  const relative = relativeContentionCurve(reference, knobs);
  return (num_nodes, num_replicas, local_bsz) => {
    const compute_s = oneGpu(local_bsz);
    if (num_replicas < 2) return compute_s;
    return compute_s * (relative?.(num_nodes, num_replicas, local_bsz) ?? 1);
  };
}
