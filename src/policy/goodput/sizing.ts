import { NO_VALUE_MEMO, type RoundJob } from './job-view.js';
import { StepList } from './step-sizes.js';
import { resizeInterval } from './unmeasured.js';

/**
 * Value of running a job at r replicas this round: priority weight x speedup, discounted by the
 * restart delay when r differs from what the job runs at now (a change costs a checkpoint-restart).
 * A resize of a running job is valued at the lower end of its speedup's 80% interval
 * (RoundJob.gain_interval, widened for sizes not measured): the change happens only when the gain
 * is sure to clear its cost.
 */
export function allocationValue(view: RoundJob, replicas: number, idle = false): number {
  const memo = view.value_memo;
  const sizes = view.value_sizes ?? 0;
  let k = -1;
  if (memo && replicas >= 0 && replicas < sizes) {
    k = (view.value_at ?? 0) + (idle ? sizes + replicas : replicas);
    const known = memo[k]!;
    if (known === known) return known; // not NaN: memoized
  }
  // One call of computeValue for a miss and for a size past the memo: a second call site, first
  // reached after V8 had compiled this function, made it compile again (issue #49).
  const value = computeValue(view, replicas, idle);
  if (k >= 0) memo![k] = value;
  return value;
}

/** Most values memoized per round (8 bytes each); past it, views are valued without a memo. */
const MEMO_VALUES = 1 << 22;

/**
 * Gives each view an empty value memo (RoundJob.value_memo): its own part of one buffer, not two
 * arrays per view that grow as sizes are asked, nor a typed-array view object each (5,000 views a
 * round, issue #49). Views past the buffer's size limit get none (their values are computed each
 * time: the same values).
 */
function resetValueMemos(views: readonly RoundJob[]): void {
  let total = 0;
  for (let i = 0; i < views.length; i++) total += 2 * (Math.max(0, views[i]!.max_replicas) + 1);
  const buffer = new Float64Array(Math.min(total, MEMO_VALUES)).fill(NaN);
  let offset = 0;
  for (let i = 0; i < views.length; i++) {
    const view = views[i]!;
    const sizes = Math.max(0, view.max_replicas) + 1;
    if (offset + 2 * sizes <= buffer.length) {
      view.value_memo = buffer;
      view.value_at = offset;
      view.value_sizes = sizes;
      offset += 2 * sizes;
    } else {
      view.value_memo = NO_VALUE_MEMO;
      view.value_at = 0;
      view.value_sizes = 0;
    }
  }
}

// NaN tests here are `x !== x`, not Number.isNaN: a call per value before the JIT compiles this.
function computeValue(view: RoundJob, replicas: number, idle: boolean): number {
  // Without replicas the speedup is the floor whatever the keep (every job's base value).
  if (replicas <= 0) return view.weight * floorUtility(view.utility_power);
  // sureShare and utility written inline where they are trivial: this runs tens of thousands of
  // times in a round, the first of them before the JIT has compiled it.
  const keep =
    replicas === view.current_replicas
      ? 1
      : (idle ? view.idle_restart_keep : view.restart_keep) *
        (view.current_replicas > 0 && view.gain_interval !== undefined ? sureShare(view, replicas) : 1);
  const speedup = view.speedup(replicas) * keep + SPEEDUP_FLOOR;
  const power = view.utility_power;
  if (power === 0) return view.weight * speedup;
  if (power === 1) return view.weight * Math.log(speedup);
  return view.weight * (Math.pow(speedup, 1 - power) / (1 - power));
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

/** The utility of SPEEDUP_FLOOR for the last power asked (one power per policy: no pow per job). */
let floorPower = NaN;
let floorValue = NaN;

function floorUtility(power: number): number {
  if (power !== floorPower) {
    floorPower = power;
    floorValue =
      power === 0
        ? SPEEDUP_FLOOR
        : power === 1
          ? Math.log(SPEEDUP_FLOOR)
          : Math.pow(SPEEDUP_FLOOR, 1 - power) / (1 - power);
  }
  return floorValue;
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
  const counts = new Array<number>(views.length).fill(0);
  // Values are memoized from here (the views no longer change; a test may change one between calls).
  resetValueMemos(views);
  let free = free_gpus;
  // Only jobs with a minimum are served in priority order (40,000 jobs: sort only those).
  const withMinimum: number[] = [];
  for (let i = 0; i < views.length; i++) if ((views[i] as RoundJob).min_replicas > 0) withMinimum.push(i);
  const byPriority = withMinimum.sort((a, b) => views[b]!.weight - views[a]!.weight || a - b);
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
  // Every pass's rules from one literal (one object shape for bestStep's reads).
  const pass = (floor: number, whole: boolean, idle: boolean): PassRules => ({ floor, whole, idle, price: gpu_price });
  if (min_marginal_speedup > 0 || whole_nodes)
    free = grow(views, counts, free, lookahead, pass(min_marginal_speedup, whole_nodes, false));
  free = grow(views, counts, free, lookahead, pass(0, false, false));
  grow(views, counts, free, lookahead, pass(0, false, true));
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
  // No GPU left: no job has a step (bestStep's room is 0), so the pass changes nothing.
  if (free <= 0) return free;
  // A job has at most one step in the heap at any time.
  const heap = new StepHeap(views.length);
  for (let i = 0; i < views.length; i++) {
    const view = views[i] as RoundJob;
    if (view.min_replicas === 0 || (counts[i] as number) > 0)
      bestStep(heap, view, i, counts[i] as number, free, lookahead, pass);
  }
  while (free > 0 && heap.size > 0) {
    const i = heap.topView();
    const replicas = heap.topReplicas();
    heap.pop();
    // Fewer GPUs left than this step wanted: re-plan it with what is left. Else take it, and plan
    // the job's next step. (bestStep is called directly, not through a closure made per pass:
    // a new closure each pass and round was a new call target for the compiled loop.)
    if (replicas <= free) {
      counts[i] = (counts[i] as number) + replicas;
      free -= replicas;
    }
    bestStep(heap, views[i] as RoundJob, i, counts[i] as number, free, lookahead, pass);
  }
  return free;
}

/** Scratch of bestStep's candidate steps (synchronous, so one is enough). */
const STEPS = new StepList();

/** Pushes the job's best growth step (most value gained per replica) onto `heap`, if one gains. */
function bestStep(
  heap: StepHeap,
  view: RoundJob,
  index: number,
  replicas: number,
  free: number,
  lookahead: number,
  pass: PassRules,
): void {
  const { floor, whole, idle, price } = pass;
  const room = Math.min(view.max_replicas - replicas, free, Math.max(lookahead, view.current_replicas - replicas));
  if (room <= 0) return;
  const base = allocationValue(view, replicas, idle);
  const memo = view.value_memo;
  const memoSizes = memo ? (view.value_sizes ?? 0) : 0;
  const memoOffset = (view.value_at ?? 0) + (idle ? memoSizes : 0);
  // The view's field read first: every call reads it, so the compiled code has seen it (read
  // last, behind replicas > 0, the first passes never reached it and V8 recompiled on it).
  const priced = view.model_corrected && price > 0 && replicas > 0;
  let bestGain = 0;
  let bestReplicas = 0;
  STEPS.fill(replicas, room, Math.min(view.max_replicas - replicas, free), lookahead);
  const steps = STEPS.steps;
  for (let s = 0; s < STEPS.count; s++) {
    const k = steps[s]!;
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
    // allocationValue, its memo read here (no call per candidate before the JIT compiles this).
    let value = total < memoSizes ? memo![memoOffset + total]! : NaN;
    if (value !== value) value = allocationValue(view, total, idle);
    const gain = (value - base) / k;
    if (gain > 1e-12 && (bestReplicas === 0 || gain > bestGain + 1e-12)) {
      bestGain = gain;
      bestReplicas = k;
    }
  }
  if (bestReplicas > 0) heap.push(bestGain, index, bestReplicas);
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

/**
 * Binary max-heap of steps by gain per replica, ties to the lower job index, over typed arrays
 * (tens of thousands of jobs: no object per step); at most `capacity` steps at a time.
 */
class StepHeap {
  private readonly gain: Float64Array;
  private readonly view: Int32Array;
  private readonly replicas: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.gain = new Float64Array(capacity);
    this.view = new Int32Array(capacity);
    this.replicas = new Int32Array(capacity);
  }

  topView(): number {
    return this.view[0]!;
  }

  topReplicas(): number {
    return this.replicas[0]!;
  }

  // push and pop compare slots inline: thousands of steps a round, the first ones before the JIT
  // has compiled (and inlined) helpers. Order: gain descending, then view ascending.
  push(gain: number, view: number, replicas: number): void {
    const gains = this.gain;
    const views = this.view;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const g = gains[parent]!;
      if (!(gain > g || (gain === g && view < views[parent]!))) break;
      this.put(i, g, views[parent]!, this.replicas[parent]!);
      i = parent;
    }
    this.put(i, gain, view, replicas);
  }

  pop(): void {
    const last = --this.size;
    if (last === 0) return;
    const gains = this.gain;
    const views = this.view;
    const gain = gains[last]!;
    const view = views[last]!;
    const replicas = this.replicas[last]!;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= last) break;
      const right = left + 1;
      let child = left;
      if (right < last) {
        const gr = gains[right]!;
        const gl = gains[left]!;
        if (gr > gl || (gr === gl && views[right]! < views[left]!)) child = right;
      }
      const g = gains[child]!;
      if (!(g > gain || (g === gain && views[child]! < view))) break;
      this.put(i, g, views[child]!, this.replicas[child]!);
      i = child;
    }
    this.put(i, gain, view, replicas);
  }

  private put(i: number, gain: number, view: number, replicas: number): void {
    this.gain[i] = gain;
    this.view[i] = view;
    this.replicas[i] = replicas;
  }
}
