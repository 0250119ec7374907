import type { RoundJob } from './job-view.js';
import { candidateSteps } from './step-sizes.js';
import { resizeInterval } from './unmeasured.js';

/** One candidate growth step of a job: k more replicas for a value gain of `gain` per replica. */
interface Step {
  view: number;
  replicas: number;
  gain_per_replica: number;
}

/**
 * Value of running a job at r replicas this round: priority weight x speedup, discounted by the
 * restart delay when r differs from what the job runs at now (a change costs a checkpoint-restart).
 * A resize of a running job is valued at the lower end of its speedup's 80% interval
 * (RoundJob.gain_interval, widened for sizes not measured): the change happens only when the gain
 * is sure to clear its cost.
 */
export function allocationValue(view: RoundJob, replicas: number, idle = false): number {
  const keep =
    replicas === view.current_replicas
      ? 1
      : (idle ? view.idle_restart_keep : view.restart_keep) *
        (view.current_replicas > 0 ? sureShare(view, replicas) : 1);
  const speedup = replicas <= 0 ? 0 : view.speedup(replicas) * keep;
  return view.weight * utility(speedup + SPEEDUP_FLOOR, view.utility_power);
}

/**
 * The lower end of the 80% interval of the speedup predicted for resizing the job to `replicas`,
 * as a share of the prediction (<= 1): its residual interval widened by how far the new size (and
 * the one in force) is from what it measured (unmeasured.ts). Without `replicas`, the residuals alone.
 */
export function sureShare(view: RoundJob, replicas?: number): number {
  const interval =
    replicas === undefined
      ? view.gain_interval
      : resizeInterval(view.gain_interval, view.distance, view.current_replicas, replicas);
  return interval ? Math.exp(Math.min(0, interval.lo)) : 1;
}

/** Keeps the utility of an idle job finite (as Pollux's +0.001). */
const SPEEDUP_FLOOR = 1e-3;

function utility(speedup: number, power: number): number {
  if (power === 0) return speedup;
  if (power === 1) return Math.log(speedup);
  return Math.pow(speedup, 1 - power) / (1 - power);
}

/** Rules of `chooseReplicaCounts` beyond the values (GoodputPolicyParams has their meaning). */
export interface SizingRules {
  /** First pass: only steps adding at least this speedup per GPU. */
  min_marginal_speedup: number;
  /** First pass: multi-node sizes in whole nodes only. */
  whole_nodes: boolean;
  /** Every pass: a job with a corrected model grows past its first step only by steps that save this many seconds per GPU-second. */
  gpu_price: number;
}

const NO_RULES: SizingRules = { min_marginal_speedup: 0, whole_nodes: false, gpu_price: 0 };

/**
 * Chooses a replica count per job that maximizes the total value within `free_gpus`: greedy by
 * marginal value per GPU, looking ahead over several GPUs so that non-concave steps (crossing a
 * node boundary, reaching the current size) are found. Jobs with min_replicas get them first, in
 * priority order, or nothing. Deterministic: ties go to the earlier-submitted job.
 * Returns counts indexed like `views`; their sum never exceeds `free_gpus`. With a `gpu_price`
 * GPUs may be left over although some job would gain from them.
 */
export function chooseReplicaCounts(
  views: readonly RoundJob[],
  free_gpus: number,
  lookahead: number,
  rules: Partial<SizingRules> = {},
): number[] {
  const { min_marginal_speedup, whole_nodes, gpu_price } = { ...NO_RULES, ...rules };
  const counts = views.map(() => 0);
  let free = free_gpus;
  const weight = Float64Array.from(views, (v) => v.weight);
  const byPriority = views.map((_, i) => i).sort((a, b) => (weight[b] as number) - (weight[a] as number) || a - b);
  for (const i of byPriority) {
    const view = views[i] as RoundJob;
    if (view.min_replicas > 0 && view.min_replicas <= free) {
      counts[i] = view.min_replicas;
      free -= view.min_replicas;
    }
  }
  // Efficient steps first; then any step that still gains; then, so that no GPU idles, any step
  // that gains when the restart budget is ignored (a job that has restarted a lot is otherwise
  // left small next to idle GPUs). With whole_nodes, the first pass only builds multi-node sizes
  // from whole nodes (lookahead is the node size).
  const passes: Omit<PassRules, 'price'>[] = [];
  if (min_marginal_speedup > 0 || whole_nodes)
    passes.push({ floor: min_marginal_speedup, whole: whole_nodes, idle: false });
  passes.push({ floor: 0, whole: false, idle: false });
  passes.push({ floor: 0, whole: false, idle: true });
  for (const pass of passes) free = grow(views, counts, free, lookahead, { ...pass, price: gpu_price });
  return counts;
}

/** One greedy pass: its speedup floor per GPU, whole-node rule, restart price and GPU price. */
interface PassRules {
  floor: number;
  whole: boolean;
  /** Price restarts by the idle-GPU keep (the restart budget ignored). */
  idle: boolean;
  price: number;
}

/** Greedy growth of `counts` (mutated) by best value per GPU; returns the GPUs left. */
function grow(
  views: readonly RoundJob[],
  counts: number[],
  free_gpus: number,
  lookahead: number,
  pass: PassRules,
): number {
  let free = free_gpus;
  const heap = new StepHeap();
  const push = (i: number): void => {
    const step = bestStep(views[i] as RoundJob, i, counts[i] as number, free, lookahead, pass);
    if (step) heap.push(step);
  };
  for (let i = 0; i < views.length; i++) {
    const view = views[i] as RoundJob;
    if (view.min_replicas === 0 || (counts[i] as number) > 0) push(i);
  }
  while (free > 0) {
    const step = heap.pop();
    if (!step) break;
    const i = step.view;
    if (step.replicas > free) {
      push(i); // fewer GPUs are left than this step wanted: re-plan it with what is left
      continue;
    }
    counts[i] = (counts[i] as number) + step.replicas;
    free -= step.replicas;
    push(i);
  }
  return free;
}

function bestStep(
  view: RoundJob,
  index: number,
  replicas: number,
  free: number,
  lookahead: number,
  pass: PassRules,
): Step | undefined {
  const { floor, whole, idle, price } = pass;
  const room = Math.min(view.max_replicas - replicas, free, Math.max(lookahead, view.current_replicas - replicas));
  if (room <= 0) return undefined;
  const base = allocationValue(view, replicas, idle);
  const priced = price > 0 && replicas > 0 && view.job.model?.correction !== undefined;
  let best: Step | undefined;
  for (const k of candidateSteps(replicas, room, Math.min(view.max_replicas - replicas, free), lookahead)) {
    if (replicas > 0 && floor > 0 && (view.speedup(replicas + k) - view.speedup(replicas)) / k < floor) continue;
    const total = replicas + k;
    if (view.grow_back_to && total > view.current_replicas && !view.grow_back_to.has(total)) continue;
    if (priced && !worthItsGpus(view, replicas, total, price)) continue;
    if (
      whole &&
      total > lookahead &&
      total % lookahead !== 0 &&
      total !== view.current_replicas &&
      total !== view.max_replicas
    )
      continue;
    const gain = (allocationValue(view, replicas + k, idle) - base) / k;
    if (gain > 1e-12 && (!best || gain > best.gain_per_replica + 1e-12)) {
      best = { view: index, replicas: k, gain_per_replica: gain };
    }
  }
  return best;
}

/**
 * Whether growing a job from `from` (> 0) to `to` replicas saves at least `price` seconds of its
 * completion time per GPU-second it adds: with W its remaining work in 1-GPU seconds, the step
 * saves W (1/S(from) - 1/S(to)) seconds and costs W (to/S(to) - from/S(from)) GPU-seconds, so W
 * cancels. Only steps on the flat part of a speedup curve fail (at price 0.003, a GPU that adds
 * less than about 0.3% to the job's speed). Asked only for models corrected by measured step
 * times: a plain fit's flat part is often wrong (alone, with profiles off, yolov3's fit predicts
 * almost no gain past 36 GPUs, where the simulated job runs 1.37x faster on 64), and the price
 * would hold the job there.
 */
function worthItsGpus(view: RoundJob, from: number, to: number, price: number): boolean {
  const before = view.speedup(from);
  const after = view.speedup(to);
  const addedGpuTime = to / after - from / before;
  return addedGpuTime <= 0 || 1 / before - 1 / after >= price * addedGpuTime;
}

/** Binary max-heap of steps by gain per replica; ties prefer the lower job index. */
class StepHeap {
  private readonly items: Step[] = [];

  push(step: Step): void {
    const items = this.items;
    items.push(step);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i] as Step, items[parent] as Step)) break;
      [items[i], items[parent]] = [items[parent] as Step, items[i] as Step];
      i = parent;
    }
  }

  pop(): Step | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let best = i;
        if (left < items.length && before(items[left] as Step, items[best] as Step)) best = left;
        if (right < items.length && before(items[right] as Step, items[best] as Step)) best = right;
        if (best === i) break;
        [items[i], items[best]] = [items[best] as Step, items[i] as Step];
        i = best;
      }
    }
    return top;
  }
}

function before(a: Step, b: Step): boolean {
  return a.gain_per_replica > b.gain_per_replica || (a.gain_per_replica === b.gain_per_replica && a.view < b.view);
}
