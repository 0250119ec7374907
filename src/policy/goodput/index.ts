import type { Allocation, ClusterSnapshot } from '../../core/cluster.js';
import { byShape, requireSolver } from '../by-shape.js';
import type {
  DecisionDiagnostics,
  GainClaim,
  Policy,
  PolicyDecision,
  PolicyFactory,
  PolicyOptions,
  PolicyParamValue,
} from '../policy.js';
import { applyInterval } from '../../goodput/interval.js';
import type { MemoBank } from '../../goodput/memo-bank.js';
import { ModelMemo } from '../../goodput/model-memo.js';
import { GOODPUT_HETERO_DEFAULTS } from '../sia/goodput-hetero.js';
import { ResumingGoodputHetero } from '../sia/resuming.js';
import { GOODPUTS_MEMO_KIND, goodputsFingerprint, savedGoodputs, type GoodputMemo } from '../sia/goodput-memo.js';
import { OpenNodes } from '../typed.js';
import { SPEEDUP_MEMO_KIND, savedSpeedup, speedupFingerprint } from './view-speedup.js';
import {
  buildRoundJobs,
  defaultGoodputPolicyParams,
  type GoodputPolicyParams,
  type RoundJob,
  type SpeedupCache,
} from './job-view.js';
import { allocateJobs, usageAfter } from './node-allocation.js';
import { BoundBuilder } from './scale.js';
import { allocationValue, chooseReplicaCounts } from './sizing.js';
import { StepList } from './step-sizes.js';
import { resizeInterval } from './unmeasured.js';

/**
 * Goodput's own policy (docs/policy.md): every round, size jobs by their goodput speedup,
 * weighted towards jobs that have received little service (shorter expected completion), price
 * every reallocation by its restart delay, and place replicas so that distributed jobs do not
 * share nodes. Deterministic: it uses no randomness at all. Non-preemptible jobs keep their
 * allocation once placed.
 */
export class GoodputPolicy implements Policy {
  readonly name = 'goodput';
  /** From the `profiles` knob (default true): start jobs from their key's profile. */
  readonly uses_profiles: boolean;
  /** From the `network_model` knob (default false): see Policy.uses_network_model. */
  readonly uses_network_model: boolean;
  private readonly params: GoodputPolicyParams;
  /** Memo of pure speedup evaluations per model content; never changes a decision. */
  private readonly speedups: SpeedupCache = new ModelMemo();

  constructor(params: Partial<GoodputPolicyParams> = {}) {
    this.params = { ...defaultGoodputPolicyParams, ...params };
    this.uses_profiles = this.params.profiles;
    this.uses_network_model = this.params.network_model;
  }

  /** Saves its speedup memo to `bank` and seeds it from there (memo-bank.ts; never changes a decision). */
  keepMemosIn(bank: MemoBank): void {
    this.speedups.keepIn(bank, SPEEDUP_MEMO_KIND, savedSpeedup, speedupFingerprint);
  }

  decide(snapshot: ClusterSnapshot): PolicyDecision {
    const allViews = buildRoundJobs(snapshot, this.params, this.speedups);
    // Jobs that keep what they hold (pinned) and the others, in one pass.
    const pinned: RoundJob[] = [];
    const views: RoundJob[] = [];
    for (let i = 0; i < allViews.length; i++) {
      const v = allViews[i]!;
      if (v.current_replicas > 0 && (!v.job.preemptible || v.hold !== undefined)) pinned.push(v);
      else views.push(v);
    }
    const usage = usageAfter(
      snapshot.nodes,
      pinned.map((v) => v.current),
    );
    const free = usage.free.reduce((sum, f) => sum + Math.max(0, f), 0);
    const gpusPerNode = Math.max(1, ...snapshot.nodes.map((n) => n.gpus));
    const counts = chooseReplicaCounts(views, free, gpusPerNode, this.params);
    // Replicas each view got (by index): read below instead of looking up job ids.
    const got = new Int32Array(views.length);
    const allocations: Record<string, Allocation> = allocateJobs(views, counts, usage, got);
    for (let i = 0; i < pinned.length; i++) allocations[pinned[i]!.job.id] = pinned[i]!.current;
    const rejections: PolicyDecision['rejections'] = {};
    const kept = pinned.reduce((sum, v) => sum + v.current_replicas, 0);
    const busy =
      kept > 0
        ? `all GPUs are in use (${kept} held by jobs that are not stopped now: ${keptCauses(pinned)})`
        : 'all GPUs are used by jobs with higher priority (less remaining work or attained service)';
    for (let i = 0; i < views.length; i++) {
      if (got[i]! > 0) continue;
      const view = views[i]!;
      rejections[view.job.id] =
        view.max_replicas === 0
          ? { code: 'NO_FEASIBLE_SIZE', message: 'the job cannot run on any replica count within its limits' }
          : { code: 'WAITING_FOR_GPUS', message: busy };
    }
    const diagnostics = sizingGap(views, got, free, gpusPerNode);
    const gains = resizeGains(views, got);
    this.speedups.nextRound();
    return Object.keys(gains).length > 0
      ? { allocations, rejections, diagnostics, gains }
      : { allocations, rejections, diagnostics };
  }
}

/**
 * The round's objective (the sum of the movable jobs' values at the sizes they got) against the
 * Lagrangian bound of the sizing problem over the sizes the policy considers (each job's sizes up
 * to a node, then whole-node sizes spaced 1.5x up to its maximum, and its current and new size).
 * The gap counts everything the bound ignores: placement, the GPU price, whole-node rules, greed.
 * The sizes are the sizing's own first candidates (sizing.ts bestStep from 0, same spacing), so
 * their values are read from its memo, not computed again (issue #49: 2x spacing valued ~3 more
 * sizes per large job, a fifth of the round's values).
 */
function sizingGap(
  views: readonly RoundJob[],
  placed: Int32Array,
  free: number,
  gpusPerNode: number,
): DecisionDiagnostics {
  let objective = 0;
  const builder = new BoundBuilder(views.length * 4, views.length);
  // Scratch reused for every job (5,000 jobs a round: no arrays per job).
  const steps = new StepList();
  let sizes = new Int32Array(64); // integers: passed on as small integers, not boxed doubles
  let values = new Float64Array(64);
  for (let i = 0; i < views.length; i++) {
    const view = views[i]!;
    const got = placed[i]!;
    objective += allocationValue(view, got);
    const most = Math.min(view.max_replicas, free);
    // Ascending sizes: 0, the steps from 0 (ascending) within the job's minimum, and got and
    // current inserted in place (no set or sort: this runs for every job of every round).
    steps.fill(0, Math.min(gpusPerNode, most), most, gpusPerNode);
    if (sizes.length < steps.count + 3) {
      sizes = new Int32Array(2 * (steps.count + 3));
      values = new Float64Array(sizes.length);
    }
    let n = 0;
    sizes[n++] = 0;
    for (let k = 0; k < steps.count; k++) if (steps.steps[k]! >= view.min_replicas) sizes[n++] = steps.steps[k]!;
    n = insertSorted(sizes, n, got);
    n = insertSorted(sizes, n, view.current_replicas);
    // allocationValue, its memo (filled by the sizing) read here without a call per size.
    const memo = view.value_memo;
    const memoSizes = memo ? (view.value_sizes ?? 0) : 0;
    const memoAt = view.value_at ?? 0;
    for (let k = 0; k < n; k++) {
      const r = sizes[k]!;
      const value = r < memoSizes ? memo![memoAt + r]! : NaN;
      values[k] = value !== value ? allocationValue(view, r) : value; // NaN: not memoized
    }
    builder.add(sizes, values, n);
  }
  const bound = builder.bound(free);
  const gap = Math.max(0, (bound - objective) / Math.max(Math.abs(bound), 1e-12));
  return { method: 'greedy', objective, bound, gap };
}

/** Inserts `x` into the ascending first `n` of `sizes` (room for one more) unless it is there; the new count. */
function insertSorted(sizes: Int32Array, n: number, x: number): number {
  let k = n;
  while (k > 0 && sizes[k - 1]! > x) k--;
  if (k > 0 && sizes[k - 1] === x) return n;
  sizes.copyWithin(k + 1, k, n);
  sizes[k] = x;
  return n + 1;
}

/**
 * The gain each resize between positive sizes was decided with: the speedup of the new size over
 * the current one as the round valued it, with its 80% interval (RoundJob.gain_interval, widened
 * by the sizes' distance from what the job measured: unmeasured.ts).
 */
function resizeGains(views: readonly RoundJob[], placed: Int32Array): Record<string, GainClaim> {
  const gains: Record<string, GainClaim> = {};
  for (let i = 0; i < views.length; i++) {
    const view = views[i]!;
    const to = placed[i]!;
    const from = view.current_replicas;
    if (from === 0 || to === 0 || to === from || !view.job.model) continue;
    // No more than the model can show: a replica's share of the speedup never grows with the
    // replica count, so the ratio lies between to/from and 1 (a correction may bend the curve past that).
    const ratio = view.speedup(to) / Math.max(view.speedup(from), 1e-12);
    const gain = Math.min(Math.max(ratio, Math.min(to / from, 1)), Math.max(to / from, 1));
    const [lo, hi] = applyInterval(
      gain,
      resizeInterval(view.gain_interval, view.distance, from, to) ?? { lo: 0, hi: 0 },
    );
    gains[view.job.id] = { gain, lo, hi };
  }
  return gains;
}

/**
 * Why the pinned jobs keep their GPUs, naming only the causes that apply (with their GPU counts
 * when there are several): "not preemptible", "within their minimum time slice", "preempted the
 * most times allowed".
 */
function keptCauses(pinned: readonly RoundJob[]): string {
  const causes = new Map<string, number>();
  for (const v of pinned) {
    const cause = !v.job.preemptible
      ? 'not preemptible'
      : v.hold === 'MAX_PREEMPTIONS'
        ? 'preempted the most times allowed'
        : 'within their minimum time slice';
    causes.set(cause, (causes.get(cause) ?? 0) + v.current_replicas);
  }
  if (causes.size === 1) return [...causes.keys()][0]!;
  return [...causes].map(([cause, n]) => `${n} ${cause}`).join(', ');
}

/** Registry entry of the goodput policy. */
export const goodputPolicy: PolicyFactory = {
  name: 'goodput',
  job_mode: 'adaptive',
  description: "Goodput's policy: goodput-sized, service-weighted, restart-aware, interference-free placement",
  params: { ...defaultGoodputPolicyParams } satisfies Record<string, PolicyParamValue>,
  param_bounds: {
    initial_replicas: { min: 1, integer: true },
    explore_factor: { min: 1 },
    unmeasured_gain_share: { min: 0, max: 1 },
    gpu_price: { min: 0 },
    costate_count_power: { min: 0 },
    service_half_weight_gpu_s: { min: 1 },
    queue_base_gpu_s: { min: 1e-3 },
    queue_factor: { min: 1 },
    queue_count: { min: 1, integer: true },
    max_preemptions: { min: 0, integer: true },
  },
  uses_solver: true,
  create: (options: PolicyOptions) => createGoodputPolicy(options),
};

/**
 * The goodput policy: on one GPU type its sizing (GoodputPolicy); on several, Sia's program with
 * what goodput knows added (sia/goodput-hetero.ts), over the open nodes (typed.ts OpenNodes),
 * discounting a change against what a job holds when its instance is new (sia/resuming.ts).
 */
export function createGoodputPolicy(options: PolicyOptions): Policy {
  // options.params holds only knobs listed above, each with its default's type (policy-params.ts).
  const oneType = new GoodputPolicy(options.params as Partial<GoodputPolicyParams> | undefined);
  const knobs = { ...GOODPUT_HETERO_DEFAULTS, ...options.mixed_params };
  // One goodput memo for every instance OpenNodes makes (a new one whenever the open nodes change).
  const goodputs: GoodputMemo = new ModelMemo();
  if (options.memo_bank) {
    oneType.keepMemosIn(options.memo_bank);
    goodputs.keepIn(options.memo_bank, GOODPUTS_MEMO_KIND, savedGoodputs, goodputsFingerprint);
  }
  const typed = () =>
    new OpenNodes(() => new ResumingGoodputHetero(requireSolver(options.solver, 'goodput'), knobs, goodputs));
  const flags = { corrects_profiles: knobs.correct_profiles === 1, transfers_models: knobs.transfer_types === 1 };
  return byShape(oneType, typed, flags);
}
