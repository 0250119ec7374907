/**
 * The control plane's persistence, as the domain sees it. Every method that changes a job's
 * state is one named atomic operation: it checks the job's current state, applies the change and
 * appends the event (who, when, why) in one transaction, or changes nothing and throws
 * `GoodputError('E_CONFLICT')` when the job is not in an allowed source state
 * (`E_NOT_FOUND` when it does not exist). Implementations: sqlite/sqlite-store.ts; all pass
 * conformance.ts.
 */
import type { ShareUsage } from '../core/cluster.js';
import type { GoodputError } from '../core/errors.js';
import type { GradSample } from '../goodput/key-profile.js';
import type { BatchLimits, PerfParams, ProfilePoint, StepCorrection } from '../goodput/types.js';
import type { EventKind, FailureRecord, StopKind } from './lifecycle.js';
import type {
  JobEvent,
  JobRecord,
  JobSpec,
  JobState,
  LiveReplicaPage,
  Measurement,
  ProfileRow,
  ProfileUse,
  ReplicaExit,
  ReplicaRecord,
  ReplicaSpan,
  ReportRecord,
  StoredKeyProfile,
  TokenRecord,
  DeviceTime,
  CancelledJob,
  UserUsage,
  PolicyMemoRecord,
} from './types.js';

export type { DeviceTime, CancelledJob, UserUsage, PolicyMemoRecord };

/** Input of `createJob`. */
export interface NewJob {
  id: string;
  name: string;
  user: string;
  spec: JobSpec;
  /** The submit's idempotency key: a second job with the same user and key is not created (see `createJob`). */
  idempotency_key?: string;
  /** Per-user limits checked in the creating transaction (see `createJob`); absent: none. */
  limits?: UserJobLimits;
}

/**
 * Most jobs one user may have at once (as Slurm's MaxSubmitJobs): `max_active` not ended (any
 * state of lifecycle.ts ACTIVE_STATES), `max_queued` of them `queued` (submitted, never started).
 * 0 or Infinity: no limit.
 */
export interface UserJobLimits {
  max_active: number;
  max_queued: number;
}

/**
 * Where a job's replicas are bound: node index (the policy's allocation) and device index on
 * that node, per replica.
 */
export interface DeviceBinding {
  allocation: number[];
  devices: number[];
}

/** A launched replica, as recorded by `launchJob`. */
export type NewReplica = Omit<ReplicaRecord, 'job_id' | 'attempt' | 'exit_code' | 'exited_at_ms'>;

/** Extra facts a stop or finish records: the failure that caused it, event data (e.g. a log tail). */
export interface TransitionDetail {
  failure?: FailureRecord;
  data?: Record<string, unknown>;
}

/** Filter of `listJobs`. */
export interface JobQuery {
  user?: string;
  states?: readonly JobState[];
  /**
   * Only jobs that had not ended before this time (epoch ms): those not ended and those that
   * ended at or after it (an indexed range: the cost follows the recent jobs, not the history).
   */
  ended_since_ms?: number;
}

/** Filter of `cancelJobs`: every field given must match; `states` default: every active state. */
export interface CancelQuery {
  user?: string;
  name?: string;
  states?: readonly JobState[];
}

/** Filter and position of `listJobsPage`. */
export interface JobPageQuery extends JobQuery {
  /** Exact job name. */
  name?: string;
  /** Submitted at or after this time (epoch ms). */
  since_ms?: number;
  /** Most jobs of the page (>= 1). */
  limit: number;
  /** `next_cursor` of the previous page; absent: the first page. */
  cursor?: string;
  /** Submission order: newest first (default) or oldest first. */
  order?: 'asc' | 'desc';
}

/** One page of `listJobsPage`. */
export interface JobPage {
  jobs: JobRecord[];
  /** Where the next page starts; null on the last page. */
  next_cursor: string | null;
}

/** Measurements of one job and attempt, as posted in one report request. */
export interface ReportBatch {
  job_id: string;
  attempt: number;
  limits: BatchLimits | undefined;
  reports: readonly Measurement[];
  /** The job checkpoints when stopped (docs/contract.md); absent: unknown, left as stored. */
  checkpoint_on_stop?: boolean;
  /**
   * The goodput model's profile point of each report, same order (goodput/profile.ts
   * `profilePoint`): the store aggregates them per configuration and does no model maths.
   */
  profile: readonly ProfilePoint[];
}

/** Result of `addReports`. */
export interface ReportsAdded {
  job: JobRecord;
  /** A configuration (nodes, replicas, local batch) was seen for the first time. */
  new_configuration: boolean;
}

/** Input of `mergeKeyProfile`: what one job measured so far, for its key's profile. */
export interface KeyProfileUpdate {
  key: string;
  gpu_type: string;
  job_id: string;
  /** The job's profile points (one per configuration; a configuration already in the profile is replaced). */
  points: readonly ProfilePoint[];
  /** Gradient samples (a sample at a progress already in the profile replaces it). */
  grad: readonly GradSample[];
  /** The job's batch limits; null leaves the profile's. */
  limits: BatchLimits | null;
  /** Parameter count of the job's model as it last reported it; absent (or <= 0) leaves the profile's. */
  model_parameters?: number;
}

/** Input of `saveRefit`: what one refit of a job's model writes. */
export interface RefitCommit {
  job_id: string;
  perf: PerfParams;
  correction: StepCorrection | null;
  /** The job stops using its key's profile (its measurements disagreed with it). */
  discard?: { reason: string; data: Record<string, unknown> };
  /** The job's measurements for its key's profile, and the fit of the merged profile's points. */
  profile?: {
    update: KeyProfileUpdate;
    perf: PerfParams;
    /** Replace the profile (see ProfileBook: one no other job confirmed) instead of adding to it. */
    replaced?: { reason: string; data: Record<string, unknown> };
  };
}

export interface Store {
  /**
   * Inserts a job in state `queued` with event `submitted`. Throws E_CONFLICT on a duplicate id.
   * With `idempotency_key`: when the user already created a job with that key, returns that job
   * and creates nothing (in the same transaction). With `limits`: throws E_JOB_LIMIT (creating
   * nothing) when the user already has `max_active` jobs not ended or `max_queued` queued ones,
   * counted in the same transaction (a replayed idempotent submit is answered first).
   */
  createJob(job: NewJob, actor: string): Promise<JobRecord>;
  /** The job `user` created with idempotency key `key`, if any. */
  jobForSubmitKey(user: string, key: string): Promise<JobRecord | undefined>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /** Just the state of a job (cheap: no record is built; the job-token check's hot path). */
  getJobState(id: string): Promise<JobState | undefined>;
  /** Jobs in submission order (oldest first). */
  listJobs(query?: JobQuery): Promise<JobRecord[]>;
  /**
   * One page of jobs by submission time (keyset paging: a page costs the same whatever the
   * store's size). E_BAD_REQUEST for a cursor this store did not return.
   */
  listJobsPage(query: JobPageQuery): Promise<JobPage>;
  /** Number of jobs per state (states without jobs are absent). */
  countJobsByState(): Promise<Map<JobState, number>>;
  /**
   * Cancels every job matching `query` in one transaction (each as `finishJob(id, 'cancelled')`,
   * with its event); terminal states in `query.states` are ignored. Returns what was cancelled
   * (the caller stops the replicas of those that held devices).
   */
  cancelJobs(query: CancelQuery, actor: string, reason: string): Promise<CancelledJob[]>;
  /**
   * Removes up to `limit` ended jobs that ended before `before_ms` (oldest first) with
   * everything kept for them (events, reports, replicas, profiles rows, idempotency keys), in one
   * transaction; their GPU time and count move to the per-user totals `usage` reports. Profiles
   * of profile keys are kept. Returns the ids removed.
   */
  deleteEndedJobs(before_ms: number, limit: number): Promise<string[]>;
  /** Recorded GPU time per user, removed jobs included (see `deleteEndedJobs`), by user. */
  usage(): Promise<UserUsage[]>;

  /** `queued | preempted -> starting` with its binding and earliest launch time. */
  assignJob(
    id: string,
    binding: DeviceBinding,
    not_before_ms: number,
    actor: string,
    reason: string,
  ): Promise<JobRecord>;
  /** Changes the target binding of a `starting` or `rescaling` job (state unchanged). */
  retargetJob(id: string, binding: DeviceBinding, actor: string, reason: string): Promise<JobRecord>;
  /**
   * `starting -> running`: records the replicas of attempt `launches`, then increments
   * `launches`, sets `launched_at_ms` (and `started_at_ms` the first time). Reports, not
   * launches, raise `max_profiled_replicas` (a size counts once it was measured).
   */
  launchJob(id: string, replicas: readonly NewReplica[], actor: string, reason: string): Promise<JobRecord>;
  /**
   * `running -> rescaling`: the replicas are being stopped (signal sent); `binding` is where
   * the job goes next (empty: nowhere). Adds the attempt's GPU time to attained service; records
   * `kind` as `stop_kind` (event `rescale`, `failed-replica` or `hung`); a failure or a hang
   * increments `failures`; `detail.failure` becomes `last_failure`; a hang sets `health` to the
   * reason.
   */
  stopJob(
    id: string,
    binding: DeviceBinding,
    kind: StopKind,
    actor: string,
    reason: string,
    detail?: TransitionDetail,
  ): Promise<JobRecord>;
  /** `rescaling -> starting` (relaunch on the target binding, not before `not_before_ms`). */
  relaunchJob(id: string, not_before_ms: number, actor: string, reason: string): Promise<JobRecord>;
  /** `starting | rescaling -> preempted` (or `queued` if it never launched); binding cleared. */
  requeueJob(id: string, actor: string, reason: string): Promise<JobRecord>;
  /**
   * Any non-terminal state -> `to` (terminal); binding cleared, `finished_at_ms` set;
   * `detail.failure` (the failure that ended it) becomes `last_failure` and counts in
   * `failures`; `detail.data` is the event's data.
   */
  finishJob(
    id: string,
    to: 'succeeded' | 'failed' | 'cancelled',
    actor: string,
    reason: string,
    detail?: TransitionDetail,
  ): Promise<JobRecord>;
  /** Replicas of a job, of one attempt or all, by attempt then rank. */
  listReplicas(job_id: string, attempt?: number): Promise<ReplicaRecord[]>;
  /** Every replica without a recorded exit, by (job, attempt, rank); with `page`, one page of them. */
  listLiveReplicas(page?: LiveReplicaPage): Promise<ReplicaRecord[]>;
  /**
   * Live replicas of one of `job_ids` or on one of `nodes` (names), in listLiveReplicas's order:
   * what a launch needs, without reading every live replica of a large cluster.
   */
  listLiveReplicasFor(job_ids: readonly string[], nodes: readonly string[]): Promise<ReplicaRecord[]>;
  /** Spans of the replicas of `job_ids` (every attempt) with no exit or one at or after `since_ms`; by job, attempt, rank. */
  listReplicasSince(job_ids: readonly string[], since_ms: number): Promise<ReplicaSpan[]>;
  /**
   * Records a replica's exit code with event `replica-exited` (its reason ends with `detail`
   * when given). Idempotent: returns false and changes nothing if the exit was already recorded.
   */
  recordReplicaExit(exit: ReplicaExit, actor: string): Promise<boolean>;
  /**
   * Stores measurements of one attempt (oldest first), folds them into the job's profile,
   * updates limits (when given), latest gradient statistics, step, samples and step time.
   * Atomic. E_CONFLICT (changing nothing) when the job has ended.
   */
  addReports(batch: ReportBatch): Promise<ReportsAdded>;
  /**
   * `addReports` for many batches in one transaction (group commit for the report endpoint).
   * Per batch: its result, or a GoodputError value (E_NOT_FOUND, E_CONFLICT for an ended job,
   * or E_BAD_REQUEST when core/report-issues.ts finds the batch invalid for the stored job) that
   * affects no other batch.
   */
  addReportBatches(batches: readonly ReportBatch[]): Promise<(ReportsAdded | GoodputError)[]>;
  /** Latest measurements of a job, oldest first (at most `limit`, default 1000). */
  listReports(job_id: string, limit?: number): Promise<ReportRecord[]>;
  /**
   * A job's measurements per configuration and GPU type (the type its attempt's replicas
   * recorded), by configuration. With `gpu_type`, only those measured on that type and those of
   * unknown type ('').
   */
  getProfile(job_id: string, gpu_type?: string): Promise<ProfileRow[]>;
  /**
   * Everything one refit of a job's model changes, in one transaction: the job's fitted
   * throughput parameters and their measured correction (JobRecord.correction); with `discard`,
   * what `setProfileUse(…, 'discarded', …)` does; with `profile`, the job's measurements merged
   * into its key's profile as `mergeKeyProfile` does (after removing the profile whole, with event
   * `profile-replaced` on the job, when `replaced`) and `profile.perf` stored as that profile's
   * fit. Returns the stored profile after the merge (undefined without `profile`). E_NOT_FOUND
   * (nothing written) for an unknown job.
   */
  saveRefit(refit: RefitCommit): Promise<StoredKeyProfile | undefined>;

  /**
   * Merges one job's measurements into the profile of (`key`, `gpu_type`) with
   * goodput/key-profile.ts `addToProfile` semantics (the profile is created when absent; `jobs`
   * counts each job once, running ones included) and returns the merged profile. Atomic. Does
   * not check that the job exists (the profile outlives its jobs). The fitted `perf` is kept
   * until `saveKeyProfilePerf` replaces it.
   */
  mergeKeyProfile(update: KeyProfileUpdate): Promise<StoredKeyProfile>;
  /** Stores the throughput parameters fitted on a profile's points; false (nothing changed) when there is no such profile. */
  saveKeyProfilePerf(key: string, gpu_type: string, perf: PerfParams): Promise<boolean>;
  getKeyProfile(key: string, gpu_type: string): Promise<StoredKeyProfile | undefined>;
  /** Profiles (of one key, or all), by key then GPU type. */
  listKeyProfiles(key?: string): Promise<StoredKeyProfile[]>;
  /**
   * Removes the profile of (`key`, `gpu_type`) whole (points, gradient samples, jobs, fit) in one
   * transaction; false when there is none. Jobs keep their own measurements and `profile_use`;
   * the next merge of a job of the key starts a new profile.
   */
  deleteKeyProfile(key: string, gpu_type: string): Promise<boolean>;
  /**
   * Sets how the job uses its key's profile and records the event (`profile-used` or
   * `profile-discarded`, with `reason` and `data`) in one transaction. Idempotent: returns false
   * and records nothing when the job already has `use`; a `discarded` job stays discarded (false).
   * E_NOT_FOUND for an unknown job.
   */
  setProfileUse(
    job_id: string,
    use: ProfileUse,
    actor: string,
    reason: string,
    data: Record<string, unknown>,
  ): Promise<boolean>;

  /** Events of a job, oldest first. */
  listEvents(job_id: string): Promise<JobEvent[]>;
  /**
   * Appends an event that is no state transition (e.g. `batch-size`: the job was told a new
   * batch configuration); from/to are the job's current state. E_NOT_FOUND for an unknown job.
   */
  recordEvent(
    job_id: string,
    kind: EventKind,
    actor: string,
    reason: string,
    data: Record<string, unknown>,
  ): Promise<void>;

  /** Stores a token (hash only). Idempotent for the same hash. */
  putToken(token: TokenRecord): Promise<void>;
  findToken(hash: string): Promise<TokenRecord | undefined>;
  /** Tokens (of one user, or all), oldest first, revoked and expired ones included. */
  listTokens(user?: string): Promise<TokenRecord[]>;
  /** Marks a token revoked at `at_ms`. Returns false (and changes nothing) if unknown or already revoked. */
  revokeToken(hash: string, at_ms: number): Promise<boolean>;
  /** Sets the Unix account `user`'s jobs run as in multi-user mode (replaces a previous one). */
  setUnixUser(user: string, unix_user: string): Promise<void>;
  /** The Unix account of `user`, if one was set. */
  getUnixUser(user: string): Promise<string | undefined>;
  /**
   * Sets the Slurm account `user`'s jobs are charged to when they run as their owner on Slurm;
   * false (nothing changed) when `user` has no Unix account yet.
   */
  setSlurmAccount(user: string, account: string): Promise<boolean>;
  /** The Slurm account of `user`, if one was set. */
  getSlurmAccount(user: string): Promise<string | undefined>;
  /** Decayed usage of teams and users (policy/shares/usage.ts), or undefined before any was kept. */
  getShareUsage(): Promise<ShareUsage | undefined>;
  /** Replaces the decayed usage (once per scheduling round). */
  putShareUsage(usage: ShareUsage): Promise<void>;
  /** The policy's saved memos (opaque bytes: server/policy-memo.ts), or undefined before any were saved. */
  getPolicyMemo(): Promise<PolicyMemoRecord | undefined>;
  /** Replaces the policy's saved memos. */
  putPolicyMemo(memo: PolicyMemoRecord): Promise<void>;
  /**
   * Device-seconds of the replicas of every attempt between `since_ms` and `now_ms`, by owner and
   * GPU type (`goodput usage`); attempts of jobs removed by retention are not counted.
   */
  deviceTimeSince(since_ms: number, now_ms: number): Promise<DeviceTime[]>;

  /**
   * A cheap read that throws when the store cannot serve (health checks); with `write`, also a
   * one-page committed write that changes nothing, which throws when the store cannot be written.
   */
  probe(write?: boolean): Promise<void>;

  /** Releases the database. */
  close(): Promise<void>;
}
