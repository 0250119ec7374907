/**
 * The control plane's persistence, as the domain sees it. Every method that changes a job's
 * state is one named atomic operation: it checks the job's current state, applies the change and
 * appends the event (who, when, why) in one transaction, or changes nothing and throws
 * `GoodputError('E_CONFLICT')` when the job is not in an allowed source state
 * (`E_NOT_FOUND` when it does not exist). Implementations: sqlite/sqlite-store.ts; all pass
 * conformance.ts.
 */
import type { GoodputError } from '../core/errors.js';
import type { BatchLimits, PerfParams, ProfilePoint } from '../goodput/types.js';
import type { JobEvent, JobRecord, JobSpec, JobState, Measurement, ProfileRow, ReplicaRecord, ReportRecord, TokenRecord } from './types.js';

/** Input of `createJob`. */
export interface NewJob {
  id: string;
  name: string;
  user: string;
  spec: JobSpec;
}

/** A placement decided for a job: node index and device index per replica. */
export interface Placement {
  allocation: number[];
  devices: number[];
}

/** A launched replica, as recorded by `launchJob`. */
export type NewReplica = Omit<ReplicaRecord, 'job_id' | 'attempt' | 'exit_code' | 'exited_at_ms'>;

/** Filter of `listJobs`. */
export interface JobQuery {
  user?: string;
  states?: readonly JobState[];
}

/** Measurements of one job and attempt, as posted in one report request. */
export interface ReportBatch {
  job_id: string;
  attempt: number;
  limits: BatchLimits | undefined;
  reports: readonly Measurement[];
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

export interface Store {
  /** Inserts a job in state `queued` with event `submitted`. Throws E_CONFLICT on a duplicate id. */
  createJob(job: NewJob, actor: string): Promise<JobRecord>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /** Jobs in submission order (oldest first). */
  listJobs(query?: JobQuery): Promise<JobRecord[]>;

  /** `queued | preempted -> starting` with its placement and earliest launch time. */
  assignJob(id: string, placement: Placement, not_before_ms: number, actor: string, reason: string): Promise<JobRecord>;
  /** Changes the target placement of a `starting` or `rescaling` job (state unchanged). */
  retargetJob(id: string, placement: Placement, actor: string, reason: string): Promise<JobRecord>;
  /**
   * `starting -> running`: records the replicas of attempt `launches`, then increments
   * `launches`, sets `launched_at_ms` (and `started_at_ms` the first time) and raises
   * `max_profiled_replicas`.
   */
  launchJob(id: string, replicas: readonly NewReplica[], actor: string, reason: string): Promise<JobRecord>;
  /**
   * `running -> rescaling`: the replicas are being stopped (SIGTERM sent); `placement` is where
   * the job goes next (empty: nowhere). Adds the attempt's GPU time to attained service;
   * `failure` increments `failures`.
   */
  stopJob(id: string, placement: Placement, failure: boolean, actor: string, reason: string): Promise<JobRecord>;
  /** `rescaling -> starting` (relaunch on the target placement, not before `not_before_ms`). */
  relaunchJob(id: string, not_before_ms: number, actor: string, reason: string): Promise<JobRecord>;
  /** `starting | rescaling -> preempted` (or `queued` if it never launched); placement cleared. */
  requeueJob(id: string, actor: string, reason: string): Promise<JobRecord>;
  /** Any non-terminal state -> `to` (terminal); placement cleared, `finished_at_ms` set. */
  finishJob(id: string, to: 'succeeded' | 'failed' | 'cancelled', actor: string, reason: string): Promise<JobRecord>;

  /** Replicas of a job, of one attempt or all, by attempt then rank. */
  listReplicas(job_id: string, attempt?: number): Promise<ReplicaRecord[]>;
  /** Every replica without a recorded exit, over all jobs. */
  listLiveReplicas(): Promise<ReplicaRecord[]>;
  /**
   * Records a replica's exit code with event `replica-exited`. Idempotent: returns false and
   * changes nothing if the exit was already recorded.
   */
  recordReplicaExit(job_id: string, attempt: number, rank: number, exit_code: number, actor: string): Promise<boolean>;

  /**
   * Stores measurements of one attempt (oldest first), folds them into the job's profile,
   * updates limits (when given), latest gradient statistics, step and samples. Atomic.
   */
  addReports(batch: ReportBatch): Promise<ReportsAdded>;
  /**
   * `addReports` for many batches in one transaction (group commit for the report endpoint).
   * Per batch: its result, or a GoodputError value (E_NOT_FOUND) that affects no other batch.
   */
  addReportBatches(batches: readonly ReportBatch[]): Promise<(ReportsAdded | GoodputError)[]>;
  /** Latest measurements of a job, oldest first (at most `limit`, default 1000). */
  listReports(job_id: string, limit?: number): Promise<ReportRecord[]>;
  getProfile(job_id: string): Promise<ProfileRow[]>;
  /** Stores the job's fitted throughput parameters. */
  savePerf(job_id: string, perf: PerfParams): Promise<void>;

  /** Events of a job, oldest first. */
  listEvents(job_id: string): Promise<JobEvent[]>;

  /** Stores a token (hash only). Idempotent for the same hash. */
  putToken(token: TokenRecord): Promise<void>;
  findToken(hash: string): Promise<TokenRecord | undefined>;

  /** Releases the database. */
  close(): Promise<void>;
}
