/**
 * Plain shared types of the scheduling domain. The simulator and the control plane both build
 * these; policies read them. Nothing here performs I/O.
 */
import type { BatchLimits, GoodputModel } from '../goodput/types.js';

/** A machine with identical GPUs. `index` is its position in `ClusterSnapshot.nodes`. */
export interface NodeInfo {
  index: number;
  name: string;
  gpus: number;
  /** Whether the node may disappear (spot/preemptible capacity). */
  preemptible: boolean;
  /**
   * GPU type of the node's devices (e.g. `a100`, `t4`; a machine with two kinds of GPU is two
   * nodes). Absent: the cluster's single default type, so homogeneous clusters need not name one.
   * A job's replicas are placed on nodes of one type (DEFAULT_GPU_TYPE for absent).
   */
  gpu_type?: string;
}

/** The type of nodes that name none: every homogeneous cluster's only type. */
export const DEFAULT_GPU_TYPE = 'default';

/** The GPU type of `node`: its own, or DEFAULT_GPU_TYPE. */
export function gpuTypeOf(node: Pick<NodeInfo, 'gpu_type'>): string {
  return node.gpu_type ?? DEFAULT_GPU_TYPE;
}

/**
 * A job's allocation: one node index per replica, e.g. [0, 0, 3] = two replicas on node 0 and
 * one on node 3. Order matters (a changed list is a restart). An empty list means no GPUs.
 */
export type Allocation = readonly number[];

/** What a policy knows about one active job. */
export interface PolicyJob {
  id: string;
  /** Submission time (s, same clock as `ClusterSnapshot.now_s`). */
  submitted_at_s: number;
  /** GPU-seconds of service received so far (restart windows included). */
  attained_service_gpu_s: number;
  /** Replicas the job must have to run at all (0 = may be suspended). */
  min_replicas: number;
  /** Hard cap on replicas from the user or the driver. */
  max_replicas: number;
  /**
   * Largest replica count the job has been measured at (for Pollux's doubling rule); 0 before its
   * first throughput measurement (policies do not grow a job without one).
   */
  max_profiled_replicas: number;
  /**
   * Profile key of the job: the model it trains, shared by its reruns. The simulator
   * passes the application name; the control plane the spec's `profile` or its default.
   */
  profile_key?: string;
  /**
   * Whether `model` and `max_profiled_replicas` include what earlier jobs of `profile_key`
   * measured (goodput/key-profile.ts `modelPoints`), not only the job's own reports. Absent:
   * the job's own only.
   */
  model_from_profile?: boolean;
  /** Restarts (re-allocations) so far, not counting the first start. */
  restarts: number;
  /** False: once placed, the job keeps its allocation until it finishes. */
  preemptible: boolean;
  /** Larger runs first where a policy honours priority. Default 0. */
  priority: number;
  /** Fixed total batch size (no adaptive batch size), if any. */
  fixed_batch_size?: number;
  /** Cap on adaptive batch-size growth set by the user, if any. */
  batch_size_cap?: number;
  /**
   * The fitted goodput model; absent until the job has been profiled. `limits` is always known.
   */
  model?: GoodputModel;
  limits: GoodputModel['limits'];
  /**
   * Estimates for policies that reason about remaining work with a fixed batch size (Optimus):
   * optimizer steps left and seconds per step for r = 1..max_replicas replicas (index r - 1).
   */
  remaining_steps?: number;
  step_time_s_by_replicas?: readonly number[];
  /**
   * Training still to do, in samples, when the job declares its length (e.g. its epoch count);
   * absent when unknown. The simulator passes samples at the reference batch size B0
   * (progress-equivalent); the control plane passes the raw samples the SDK reports its epoch
   * loop has left, which is what an epoch-bounded job processes whatever its batch size.
   */
  remaining_samples?: number;
  /**
   * Seconds of the job's progress that stopping it now would throw away: the time it has run
   * since its last completed checkpoint, for a job that does not checkpoint when stopped.
   * Absent or 0: a stop saves the job's progress (the simulator's jobs, and jobs using the SDK,
   * checkpoint on SIGTERM), so a stop costs only the restart delay.
   */
  progress_at_risk_s?: number;
  /**
   * When the allocation in force started (s, clock of `ClusterSnapshot.now_s`): the launch of
   * the running attempt. Absent when the job holds no devices or the caller does not track it;
   * policies then apply no minimum time slice.
   */
  allocated_since_s?: number;
  /**
   * The job's last resize between two positive sizes, when the driver tracks it (the control
   * plane does): its direction, and whether the job has reported measurements at its current
   * size since then. A policy may refuse to reverse such a change on a model refitted only on
   * the points it was made with (docs/policy.md). Absent: no such resize, or not tracked.
   */
  last_resize?: { grew: boolean; measured_since: boolean };
  /**
   * What the job knows per GPU type of the snapshot's nodes: a model per type, the sizes measured
   * there, the one-GPU rates a model is carried to another type with. Every driver fills it
   * (model/policy-job.ts); a policy that places by type (sia, goodput on several types) reads it,
   * the others need not. On a cluster of one type it has that one type.
   */
  per_type?: JobTypes;
  /**
   * The user who submitted the job (its token's user), and the team (account) it is charged to
   * (policy/shares: the shares file's team of the user, else the user). Absent: a cluster of one
   * user, where the shares layer passes every snapshot through unchanged.
   */
  owner?: string;
  team?: string;
}

/** A job's facts per GPU type (PolicyJob.per_type); every map has every type of the snapshot. */
export interface JobTypes {
  /** Largest replica count measured on each type, by the job or its key (0: never ran there). */
  max_profiled: Readonly<Record<string, number>>;
  /** Goodput model on `type` from the measurements there (its own, and its key's where in use). */
  model(type: string): GoodputModel | undefined;
  /**
   * Goodput model on `type` where neither the job nor its key has measured, transferred from its
   * measured type with what other keys measured on both (goodput/type-transfer-model.ts);
   * undefined where there is nothing to transfer from. Absent: never transferred.
   */
  transferred?(type: string): GoodputModel | undefined;
  limits(type: string): BatchLimits;
  /** One-GPU samples/s of the job's application on each type (Sia's bootstrap profile). */
  one_gpu_samples_per_s: Readonly<Record<string, number>>;
  /** Training left in B0-equivalent samples (a guess where the job does not declare its length). */
  remaining_samples: number;
  /** Seconds a restart of the job costs. */
  restart_s: number;
  /** Whether a restart is still under way (its configuration should be kept). */
  restarting: boolean;
}

/** One immutable view of the cluster handed to a policy for one scheduling round. */
export interface ClusterSnapshot {
  /** Current time (s). Policies never read a clock themselves. */
  now_s: number;
  nodes: readonly NodeInfo[];
  /** Active jobs (submitted, not finished), in submission order. */
  jobs: readonly PolicyJob[];
  /** Allocations currently in force, by job id; jobs without GPUs may be absent. */
  allocations: Readonly<Record<string, Allocation>>;
  /**
   * Teams, weights, quotas and decayed past usage for sharing the cluster between people
   * (policy/shares); absent: every owner is their own team of weight 1 with no past usage.
   */
  shares?: SnapshotShares;
}

/** One team of a shares file: members, weight of its fair share, devices guaranteed per GPU type. */
export interface TeamShare {
  name: string;
  /** Users of the team (token user names); a user is in at most one team. */
  members: readonly string[];
  /** Relative weight of the team's fair share (> 0). Default 1. */
  weight: number;
  /** Devices guaranteed per GPU type (the nodes' gpu_type) whenever the team's jobs can use them. */
  quota: Readonly<Record<string, number>>;
}

/**
 * Device-seconds used by each team and user, decayed by a half-life up to `at_s` (the snapshot
 * clock): the memory of Slurm's fair share. Computed by the driver (policy/shares/usage.ts).
 */
export interface ShareUsage {
  at_s: number;
  teams: Readonly<Record<string, number>>;
  users: Readonly<Record<string, number>>;
}

/** What a snapshot carries for sharing the cluster between people. */
export interface SnapshotShares {
  teams: readonly TeamShare[];
  usage?: ShareUsage;
  half_life_s: number;
}
