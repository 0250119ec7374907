/**
 * Plain records of the control plane's persistent state. Every store implementation returns
 * exactly these shapes; times are epoch milliseconds (`_ms`) unless the name says otherwise.
 */
import type { JobSpec } from '../core/job-spec.js';
import type { Measurement } from '../core/wire.js';
import type { KeyProfile } from '../goodput/key-profile.js';
import type { BatchLimits, GradParams, PerfParams, StepCorrection } from '../goodput/types.js';
import type { EventKind, FailureRecord, JobState, StopKind } from './lifecycle.js';

export type { JobState } from './lifecycle.js';
/** The wire types the store keeps as they are (declared once, in core/). */
export type { JobSpec, Measurement };

/** A job as stored. */
export interface JobRecord {
  id: string;
  name: string;
  user: string;
  spec: JobSpec;
  state: JobState;
  submitted_at_ms: number;
  started_at_ms: number | null;
  finished_at_ms: number | null;
  /** Launches so far; the attempt number of the next launch (GOODPUT_ATTEMPT). */
  launches: number;
  /** Failures (replica exits other than 0 / 143, and hangs) so far; compared with `spec.max_restarts`. */
  failures: number;
  /** Target (or current) allocation: node index per replica; empty = none. */
  allocation: number[];
  /** Device indices on the node, one per replica of `allocation`. */
  devices: number[];
  /** Earliest launch time of a `starting` job (restart backoff). */
  not_before_ms: number;
  /** Launch time of the running attempt, for attained service. */
  launched_at_ms: number | null;
  /** When SIGTERM was sent to the replicas (rescale/stop), for the SIGKILL deadline. */
  stop_requested_at_ms: number | null;
  attained_service_gpu_s: number;
  max_profiled_replicas: number;
  limits: BatchLimits | null;
  perf: PerfParams | null;
  /**
   * Measured over predicted step times of `perf` on the points it was fitted on (the job's own
   * and its key profile's), saved with it by each refit under a policy that keeps profiles; null
   * before the first such refit, and set to null by a refit under a policy without profiles.
   * What corrects the model of a job that has no profile of other jobs (control/loop/snapshot.ts `modelOf`).
   */
  correction: StepCorrection | null;
  grad: GradParams | null;
  step: number;
  samples: number;
  /**
   * Raw training samples the job still had to process at its newest report that knew it
   * (docs/contract.md); null while the job has never reported it (e.g. no epoch count).
   */
  remaining_samples: number | null;
  /**
   * Parameter count of the job's model at its newest report that had it (docs/contract.md
   * `model_parameters`); null while the job has never reported it. Goes into its key's profile.
   */
  model_parameters: number | null;
  last_report_at_ms: number | null;
  /** When the job's newest checkpoint became durable, as last reported; null: none reported. */
  checkpoint_at_ms: number | null;
  /** The job declared that it checkpoints when stopped (SIGTERM, exit 143; docs/contract.md). */
  checkpoint_on_stop: boolean;
  /** Step time of the newest report (s); null before the first report. Scales hung detection. */
  last_step_time_s: number | null;
  /** Why the replicas of a `rescaling` job were stopped; null in other states. */
  stop_kind: StopKind | null;
  /** The most recent replica failure (to recognise one that repeats); null if none. */
  last_failure: FailureRecord | null;
  /** The latest health finding (e.g. why it was found hung); null while none. */
  health: string | null;
  /** Why the job is in its state (last transition's reason). */
  reason: string;
  /**
   * How the job uses its profile key's profile (docs/control-plane.md, "Profiles"): `used` once
   * its model included what earlier jobs of the key measured, `discarded` once its own
   * measurements disagreed with the profile (its model is then its own points only); null before
   * either.
   */
  profile_use: ProfileUse | null;
}

/** See `JobRecord.profile_use`. */
export type ProfileUse = 'used' | 'discarded';

/**
 * What the jobs of one profile key measured on one GPU type, as stored: the pure profile
 * (goodput/key-profile.ts; points and gradient trajectory merged with `addToProfile`) plus what
 * the control plane derived from it.
 */
export interface StoredKeyProfile extends KeyProfile {
  /** Throughput parameters fitted on `points`; null until the first fit. */
  perf: PerfParams | null;
  /** Batch limits the newest contributing job reported; null when none did. */
  limits: BatchLimits | null;
  /** Ids of the jobs whose reports went into the profile, oldest first (`jobs` of them). */
  job_ids: readonly string[];
  /** Last change (epoch ms). */
  updated_at_ms: number;
}

/** When a replica held its device: what a timeline draws (Store.listReplicasSince). */
export type ReplicaSpan = Pick<
  ReplicaRecord,
  'job_id' | 'attempt' | 'rank' | 'device' | 'started_at_ms' | 'exited_at_ms'
>;

/** One replica process of one attempt. */
export interface ReplicaRecord {
  job_id: string;
  attempt: number;
  rank: number;
  /** Device index (GPU index or CPU slot); null only for placeholder rows. */
  device: number | null;
  /** Name of the node it runs on ('local' for the local backend). */
  node: string;
  /** Backend's id of the attempt (the Slurm job id); '' for local processes. */
  launch_id: string;
  /** Process id on the server's machine; 0 for replicas that run elsewhere (Slurm). */
  pid: number;
  /** Process start time as read from /proc (guards against PID reuse); '' when unknown. */
  proc_start: string;
  log_path: string;
  started_at_ms: number;
  exit_code: number | null;
  exited_at_ms: number | null;
  /** GPU type of its devices (backends/device-type.ts), as the launcher recorded it; absent when unknown. */
  gpu_type?: string;
}

/**
 * A page of `Store.listLiveReplicas` (keyset paging, so that a page costs the same wherever it
 * starts): the live replicas after `after` in (job, attempt, rank) order (none: from the first),
 * at most `limit`. A large cluster's 16,000 live replicas are read so, a page per turn of the
 * event loop.
 */
export interface LiveReplicaPage {
  after?: Pick<ReplicaRecord, 'job_id' | 'attempt' | 'rank'>;
  limit: number;
}

/** One recorded transition or notable fact of a job: who, when, why. */
export interface JobEvent {
  id: number;
  job_id: string;
  at_ms: number;
  actor: string;
  kind: EventKind;
  from_state: JobState | null;
  to_state: JobState | null;
  reason: string;
  data: Record<string, unknown>;
}

/** A stored measurement with its job and attempt. */
export interface ReportRecord extends Measurement {
  job_id: string;
  attempt: number;
  received_at_ms: number;
}

/** Aggregated step times of one configuration of a job (input of the perf-model fit). */
export interface ProfileRow {
  /** GPU type of the attempts that measured it (ReplicaRecord.gpu_type); '' when unknown (measured before types were recorded). */
  gpu_type: string;
  num_nodes: number;
  num_replicas: number;
  local_bsz: number;
  count: number;
  /** Mean time of one accumulation micro-step (s). */
  accum_step_time_s: number;
  /** Mean time of one optimizer step including synchronization (s). */
  optim_step_time_s: number;
}

/** A user's API token (stored hashed). Its public id is the first 12 characters of the hash. */
export interface TokenRecord {
  hash: string;
  user: string;
  admin: boolean;
  created_at_ms: number;
  /** The token is refused from this time on; absent: never expires. */
  expires_at_ms?: number;
  /** When it was revoked; absent while it is not. */
  revoked_at_ms?: number;
}

/** Device-seconds of one owner on one GPU type ('' when its launch recorded none). */
export interface DeviceTime {
  user: string;
  gpu_type: string;
  device_s: number;
}

/** A replica's end. `exit_code` follows the shell convention: 128 + n when killed by signal n. */
export interface ReplicaExit {
  job_id: string;
  attempt: number;
  rank: number;
  exit_code: number;
  /** What the backend learnt about the end beyond the code (e.g. "Slurm job 12 ended NODE_FAIL (NodeDown), not requested by Goodput"). */
  detail?: string;
}

/** The policy's memos as saved (Store.putPolicyMemo): when, and the bytes. */
export interface PolicyMemoRecord {
  saved_ms: number;
  body: Uint8Array;
}

/** A job `cancelJobs` cancelled, with the state it was in. */
export interface CancelledJob {
  id: string;
  user: string;
  name: string;
  from: JobState;
}

/** Recorded GPU time of one user's jobs: those in the store and those retention removed. */
export interface UserUsage {
  user: string;
  /** Jobs ever submitted (stored and removed). */
  jobs: number;
  /** Device-seconds of ended attempts (JobRecord.attained_service_gpu_s summed). */
  gpu_s: number;
}
