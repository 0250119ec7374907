import type { Allocation, ClusterSnapshot, PolicyJob } from '../../core/cluster.js';
import { correctionInterval, type LogInterval } from '../../goodput/interval.js';
import { applyOwnCostates } from './costates.js';
import { ranksByEstimate } from './ranks.js';
import { SCALE_GPUS } from './scale.js';
import { modelSpeedup, viewDistance, viewSpeedup, type SpeedupCache, type SpeedupFields } from './view-speedup.js';

export type { SpeedupCache } from './view-speedup.js';
import {
  blockedDirection,
  holdReason,
  queueEnd_gpu_s,
  queueFloor_gpu_s,
  serviceQueue,
  unknownLength,
  type HoldReason,
  type HysteresisParams,
} from './hysteresis.js';

/** What the goodput policy derives from one job for one round. */
export interface RoundJob {
  job: PolicyJob;
  /** Index in the snapshot's job list (submission order). */
  order: number;
  current: Allocation;
  /** Replica count in force now (0 when the job holds no GPUs). */
  current_replicas: number;
  min_replicas: number;
  /** Largest replica count this round may give: user cap, exploration limit, batch limit. */
  max_replicas: number;
  /** Speedup over one GPU, for r replicas packed on as few nodes as possible; memoized. */
  speedup(replicas: number): number;
  /** Relative priority weight (> 0): larger for jobs that have received little service. */
  weight: number;
  /**
   * Memo of sizing.ts allocationValue by replica count from 0 to value_sizes - 1: plain values at
   * value_memo[value_at + r], with the idle keep at value_memo[value_at + value_sizes + r] (NaN:
   * not computed), filled lazily; absent or NO_VALUE_MEMO (value_sizes 0): not memoized. The
   * buffer is shared by the round's views.
   * Set by chooseReplicaCounts: valid while no field of the view changes (the policy's sizing and
   * its gap, in one round).
   */
  value_memo?: Float64Array;
  /** Where the view's memo starts in value_memo. */
  value_at?: number;
  /** Replica counts the memo holds (0 to value_sizes - 1). */
  value_sizes?: number;
  /** Fraction of a change's benefit left after paying the restart delay (in (0, 1]). */
  restart_keep: number;
  /** The same without the restart budget: used only to hand out GPUs that would otherwise idle. */
  idle_restart_keep: number;
  /** Exponent p of the utility of speedup (see GoodputPolicyParams.utility_power). */
  utility_power: number;
  /**
   * Estimate of the remaining work (1-GPU seconds), or for ranking jobs of unknown length their
   * attained GPU-seconds (for jobs without remaining_samples, the floor of their service queue).
   */
  remaining_estimate: number;
  /** Set when the job must keep its current allocation this round (hysteresis.ts). */
  hold?: HoldReason;
  /**
   * 80% interval of log(measured / predicted) of the job's model where it was not measured (the
   * residuals of its fit, goodput/interval.ts); absent when the model has no measured
   * correction (no residuals known). A resize is valued at the lower end of its speedup (sizing.ts).
   */
  gain_interval?: LogInterval;
  /** job.model has a measured correction (always job.model?.correction !== undefined): the GPU price applies to its resizes (sizing.ts). */
  model_corrected: boolean;
  /**
   * Log-distance of a replica count from the configurations the job's model measured (0 at a
   * measured one; unmeasured.ts): widens `gain_interval` for sizes the job never ran.
   */
  distance?: (replicas: number) => number;
  /**
   * After a shrink measured since (hysteresis.ts blockedDirection allows growing again), the sizes
   * above the current one it may grow back to: those its model measured. A growth back to a size
   * never run is the reversal that a refit invites and a restart pays for (docs/policy.md).
   */
  grow_back_to?: ReadonlySet<number>;
}

/**
 * RoundJob.value_memo of a view without a memo: a built view starts with it, not undefined, so
 * that giving views their memos (sizing.ts) does not change the field's type while the JIT
 * compiles buildView, which cancelled that compilation in the first round (issue #49).
 */
export const NO_VALUE_MEMO = new Float64Array(0);

/** Tunable knobs of the goodput policy. Defaults were chosen by measurement (docs/policy.md). */
export interface GoodputPolicyParams extends HysteresisParams {
  /** Attained service (GPU-seconds) at which a job's weight halves. */
  service_half_weight_gpu_s: number;
  /** Exponent of the weight decay with attained service. */
  service_weight_power: number;
  /** Seconds of zero progress a reallocation costs (checkpoint-restart). */
  restart_delay_s: number;
  /** Floor of the remaining-time estimate used to price a restart (s). */
  min_horizon_s: number;
  /**
   * Cap of that estimate (s): a new allocation is only held until the next change, which for a
   * long job that absorbs the cluster's churn comes within minutes, not at its completion.
   */
  max_horizon_s: number;
  /**
   * Diminishing returns of speedup: a job's value is U(S) = S^(1-p)/(1-p) (log S for p = 1).
   * p = 0 maximizes total speedup; larger p equalizes speedups across jobs (p = 2 is Pollux's
   * harmonic mean).
   */
  utility_power: number;
  /**
   * Charge past restarts too: keep = budget x hold / (hold + delay) with budget =
   * max(horizon - delay x restarts, 0.05 horizon) / horizon and hold = min(horizon, max_horizon_s),
   * so a job that has already spent much of its life restarting is left alone (as Pollux does).
   */
  restart_budget: boolean;
  /**
   * Use the job's declared remaining work when known: weight = 1 / (seconds the remaining work
   * takes on one GPU), so the policy maximizes the rate at which jobs complete (shortest
   * remaining work first, sized by goodput). Jobs of unknown length fall back to attained service.
   */
  use_remaining_work: boolean;
  /**
   * Cap the hold time by the job's history too: age / (restarts + 1), the average time its
   * allocations have lasted. In a busy cluster a long job is resized on most arrivals and
   * departures, so pricing a resize against its whole remaining time makes it churn.
   */
  hold_from_history: boolean;
  /** Largest replica count for a job that has never run (its model is unknown). */
  initial_replicas: number;
  /** A job may grow to this multiple of the largest replica count it has run at. */
  explore_factor: number;
  /**
   * Share of the predicted speedup gain beyond the largest replica count a job has run at that
   * the policy believes, in [0, 1]: S'(r) = S(m) + share x (S(r) - S(m)) for r > m. A model fitted
   * on one node mispredicts multi-node sizes, and a wrong guess costs a restart to find out and
   * another to undo; 1 trusts the model fully, 0 never grows a job past what it has measured.
   */
  unmeasured_gain_share: number;
  /**
   * When > 0, weights come from the rank of each job's remaining work instead of its size: with
   * n jobs ranked from the largest (i = 1) to the smallest (i = n), w_i = (i/n)^e - ((i-1)/n)^e
   * (heSRPT's optimal shares for speedup k^(1 - 1/e)); with log utility these are the shares.
   */
  rank_exponent: number;
  /**
   * GPUs are first handed out only in steps whose added speedup per GPU is at least this (1 =
   * linear scaling); GPUs left over after that go to whichever job still gains from them. Keeps
   * a loaded cluster efficient without leaving GPUs idle.
   */
  min_marginal_speedup: number;
  /**
   * Price of GPU time in seconds of completion time per GPU-second: a job grows past its first
   * step (from 0 GPUs, never priced) only by steps that save it at least this much time per
   * GPU-second they add to its remaining work, in every pass, so GPUs may idle. Asked only of jobs
   * whose model is corrected by measured step times (with `profiles`, every job with a fit). Cuts
   * the GPUs spent on the flat part of speedup curves, where a GPU buys little time (GPU-hours;
   * measured in docs/policy.md). 0 disables it.
   */
  gpu_price: number;
  /**
   * Weights are each job's costate computed from its own speedup curve (costates.ts) instead of
   * heSRPT's shares by rank (`rank_exponent`), which are optimal only when every job has the same
   * curve; the value of a job's speedup is then linear (`utility_power` is not used). Spends fewer
   * GPU-hours for a slightly longer average JCT (measured in docs/policy.md), so off.
   */
  own_costates: boolean;
  /**
   * With own_costates: a round in which k jobs run costs k^this per second; 1 is the sum of
   * completion times without arrivals, larger values favour the shortest jobs more (1.25 measured
   * best, docs/policy.md).
   */
  costate_count_power: number;
  /**
   * Multi-node jobs are first sized in whole nodes (GPUs left over after that go to any size),
   * so that distributed jobs do not leave partial nodes that fragment the cluster.
   */
  whole_nodes: boolean;
  /**
   * Starvation floor: no weight is below this fraction of the mean weight (heSRPT's shares for
   * the largest job fall like n^(1-e)). 0 disables it.
   */
  min_weight_share: number;
  /**
   * Start each job's model from its profile key's profile: what earlier jobs of the
   * same model measured. Read by the simulator and the control plane (Policy.uses_profiles).
   */
  profiles: boolean;
  /**
   * With profiles: predict the cross-node step time of a job with no profile to start from by
   * the cluster network model fitted on every key's profile. Measured worse in the simulator
   * (docs/policy.md), so off.
   */
  network_model: boolean;
}

export const defaultGoodputPolicyParams: GoodputPolicyParams = {
  service_half_weight_gpu_s: 3600,
  service_weight_power: 1,
  restart_delay_s: 30,
  min_horizon_s: 300,
  max_horizon_s: Infinity,
  utility_power: 0.7,
  restart_budget: true,
  use_remaining_work: true,
  hold_from_history: true,
  initial_replicas: 1,
  explore_factor: 4,
  unmeasured_gain_share: 0.75,
  rank_exponent: 3,
  min_marginal_speedup: 0,
  gpu_price: 0.003,
  own_costates: false,
  costate_count_power: 1.25,
  whole_nodes: true,
  min_weight_share: 0,
  profiles: true,
  network_model: false,
  queue_base_gpu_s: 600,
  queue_factor: 10,
  queue_count: 3,
  min_slice_restarts: 4,
  starvation_factor: 8,
  max_preemptions: 5,
};

/**
 * Builds the per-round view of every preemptible active job. Pure. Replica limits follow the
 * exploration rule of Pollux, relaxed (a job may grow to explore_factor x the largest size it has
 * run at, since its model is unreliable beyond what it has measured) and the batch-size limits.
 */
export function buildRoundJobs(
  snapshot: ClusterSnapshot,
  params: GoodputPolicyParams,
  cache?: SpeedupCache,
): RoundJob[] {
  const gpusPerNode = Math.max(1, ...snapshot.nodes.map((n) => n.gpus));
  const totalGpus = snapshot.nodes.reduce((sum, n) => sum + n.gpus, 0);
  const views = buildViews(snapshot, params, cache, gpusPerNode, totalGpus);
  if (params.own_costates) applyOwnCostates(views, totalGpus, gpusPerNode, params.costate_count_power);
  else if (params.rank_exponent > 0) applyRankWeights(views, params.rank_exponent);
  if (params.min_weight_share > 0 && views.length > 0) {
    const floor = (params.min_weight_share * views.reduce((sum, v) => sum + v.weight, 0)) / views.length;
    for (const view of views) view.weight = Math.max(view.weight, floor);
  }
  return views;
}

/** Replaces weights by heSRPT shares by rank of remaining work (ties: later submission larger). */
function applyRankWeights(views: RoundJob[], exponent: number): void {
  const n = views.length;
  const rank = ranksByEstimate(views);
  for (let index = 0; index < n; index++) {
    const i = rank[index]! + 1;
    views[index]!.weight = n * (Math.pow(i / n, exponent) - Math.pow((i - 1) / n, exponent));
  }
}

/** Floor of the hold estimated from a job's history: one scheduling round of the simulator. */
const MIN_OBSERVED_HOLD_S = 60;

/** Smallest restart budget share: keeps a job that has restarted a lot restartable. */
const MIN_RESTART_BUDGET = 0.05;

function buildViews(
  snapshot: ClusterSnapshot,
  params: GoodputPolicyParams,
  cache: SpeedupCache | undefined,
  gpusPerNode: number,
  totalGpus: number,
): RoundJob[] {
  // A loop calling buildView, not a map with a closure: the first round makes 5,000 views before
  // the JIT has compiled this (issue #49).
  const jobs = snapshot.jobs;
  const views = new Array<RoundJob>(jobs.length);
  for (let order = 0; order < jobs.length; order++)
    views[order] = buildView(jobs[order]!, order, snapshot, params, cache, gpusPerNode, totalGpus);
  return views;
}

function buildView(
  job: PolicyJob,
  order: number,
  snapshot: ClusterSnapshot,
  params: GoodputPolicyParams,
  cache: SpeedupCache | undefined,
  gpusPerNode: number,
  totalGpus: number,
): RoundJob {
  const current = snapshot.allocations[job.id] ?? [];
  // Jobs of unknown length are ranked by attained service discretized into queues (hysteresis).
  const queue = unknownLength(job)
    ? serviceQueue(job, current.length === 0, snapshot.now_s, params, params.restart_delay_s)
    : undefined;
  const service_gpu_s = queue !== undefined ? queueFloor_gpu_s(queue, params) : job.attained_service_gpu_s;
  const limits = job.limits;
  const batchCap = job.fixed_batch_size ?? Math.min(limits.max_batch_size, job.batch_size_cap ?? Infinity);
  const byBatch = Math.max(1, Math.floor(batchCap / Math.max(1, limits.min_local_bsz)));
  // Measured sizes include those of earlier jobs of the job's profile key (model_from_profile),
  // so such a job starts at its efficient size and is discounted only beyond them.
  const explore = Math.max(params.explore_factor * job.max_profiled_replicas, params.initial_replicas);
  // Exploration never cuts below the job's minimum; a minimum above the hard limits is infeasible.
  const hardMax = Math.min(job.max_replicas, byBatch, totalGpus);
  let max_replicas = job.min_replicas > hardMax ? 0 : Math.max(job.min_replicas, Math.min(hardMax, explore));
  // No reversal of the last resize before a measurement at its size (hysteresis.ts).
  const blocked = current.length > 0 ? blockedDirection(job) : undefined;
  if (blocked === 'grow' && max_replicas > 0) max_replicas = Math.max(job.min_replicas, current.length);
  const min_replicas =
    max_replicas === 0
      ? 0
      : blocked === 'shrink' && current.length <= max_replicas
        ? Math.max(job.min_replicas, current.length)
        : job.min_replicas;
  // Goodput on one GPU: the speedup's base and the rate of the remaining-work estimate.
  const model = job.model;
  const modelled = model ? modelSpeedup(model, job, cache, totalGpus >= SCALE_GPUS) : undefined;
  const oneGpu = modelled?.one_gpu ?? 0;
  // Without a model: linear (linearSpeedupFn(1), written inline). No memo per job: the model's
  // speedups are kept by size (speedupAt, per model content), and the sizing memoizes values by
  // size; an array per job grown size by size was most of the round's garbage.
  const measured = job.max_profiled_replicas;
  // The view's speedup reads these (viewSpeedup); at the job's current size, for its horizon:
  const speedupFields: SpeedupFields = {
    speedup_model: modelled,
    speedup_measured: measured,
    speedup_share: params.unmeasured_gain_share,
    speedup_gpus: gpusPerNode,
  };
  const remaining_1gpu_s =
    params.use_remaining_work && oneGpu > 0 && job.remaining_samples !== undefined
      ? job.remaining_samples / oneGpu
      : undefined;
  const weight =
    remaining_1gpu_s !== undefined
      ? params.service_half_weight_gpu_s / Math.max(remaining_1gpu_s, 1)
      : 1 / Math.pow(1 + service_gpu_s / params.service_half_weight_gpu_s, params.service_weight_power);
  const age_s = Math.max(0, snapshot.now_s - job.submitted_at_s);
  // Price a restart against the time the job has left: known from its remaining work, else
  // estimated from its age (jobs that have run long tend to run long).
  const left_s =
    remaining_1gpu_s !== undefined
      ? remaining_1gpu_s / Math.max(1, viewSpeedup.call(speedupFields, current.length))
      : age_s;
  const horizon_s = Math.max(left_s, params.min_horizon_s);
  // How long a new allocation will last: at most the job's remaining time, and, once the job has
  // been reallocated, about as long as its allocations have lasted so far.
  const observed_hold_s =
    params.hold_from_history && job.restarts > 0 ? Math.max(age_s / (job.restarts + 1), MIN_OBSERVED_HOLD_S) : Infinity;
  const hold_s = Math.min(horizon_s, Math.max(params.max_horizon_s, params.min_horizon_s), observed_hold_s);
  const spent_s = params.restart_budget ? params.restart_delay_s * job.restarts : 0;
  // Budget: the share of the job's remaining time not yet spent restarting (floored, so that a
  // preempted job can always restart); delay: the restart's share of the allocation's hold time.
  const budget = Math.max(horizon_s - spent_s, MIN_RESTART_BUDGET * horizon_s) / horizon_s;
  // A stop loses the restart delay plus the progress since the job's last checkpoint (0 for
  // jobs that checkpoint when stopped, as every simulated job does).
  const idle_restart_keep = hold_s / (hold_s + params.restart_delay_s + (job.progress_at_risk_s ?? 0));
  const restart_keep = budget * idle_restart_keep;
  const hold = current.length > 0 ? holdReason(job, snapshot.now_s, params, params.restart_delay_s) : undefined;
  const shrankLast = current.length > 0 && job.last_resize?.grew === false && job.last_resize.measured_since;
  const measuredSizes = shrankLast ? model?.correction?.shapes.map((s) => s.num_replicas) : undefined;
  const corrected = model?.correction !== undefined && modelled !== undefined;
  // Every view has every field (undefined where absent), in one order: one object shape, so the
  // sizing's reads of views stay monomorphic (5,000 views a round; issue #49).
  const view: RoundJob & SpeedupFields = {
    hold,
    job,
    order,
    current,
    current_replicas: current.length,
    min_replicas,
    max_replicas,
    speedup: viewSpeedup,
    speedup_model: modelled,
    speedup_measured: measured,
    speedup_share: params.unmeasured_gain_share,
    speedup_gpus: gpusPerNode,
    weight,
    value_memo: NO_VALUE_MEMO,
    value_at: 0,
    value_sizes: 0,
    restart_keep,
    idle_restart_keep,
    // Costates are marginal values of progress already: the allocation they ask for is linear.
    utility_power: params.own_costates ? 0 : params.utility_power,
    // A job of unknown length is ranked as if it ran at least to the end of its service queue:
    // ranked by the queue's floor, a job just submitted (0) outranked every job whose remaining
    // work is known, however short, and an SDK job that reports its length within seconds
    // preempted them only to be preempted back once it did.
    remaining_estimate: remaining_1gpu_s ?? (queue !== undefined ? queueEnd_gpu_s(queue, params) : service_gpu_s),
    gain_interval: corrected ? correctionInterval(model.correction!) : undefined,
    model_corrected: model?.correction !== undefined,
    distance: corrected ? viewDistance(modelled, measured, gpusPerNode) : undefined,
    grow_back_to: measuredSizes ? new Set(measuredSizes) : undefined,
  };
  return view;
}
