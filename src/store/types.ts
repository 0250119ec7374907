/**
 * Plain records of the control plane's persistent state. Every store implementation returns
 * exactly these shapes; times are epoch milliseconds (`_ms`) unless the name says otherwise.
 */
import type { JobSpec } from '../core/job-spec.js';
import type { Measurement } from '../core/wire.js';
import type { BatchLimits, GradParams, PerfParams } from '../goodput/types.js';

/** The wire types the store keeps as they are (declared once, in core/). */
export type { JobSpec, Measurement };

/**
 * Lifecycle of a job: `queued -> starting -> running <-> rescaling -> succeeded | failed |
 * cancelled`, plus `preempted` (ran before, now waiting for devices).
 * - `starting`: devices assigned, replicas not yet launched (waiting for the devices to be
 *   released by other jobs, or for a restart backoff);
 * - `running`: replicas of the current attempt launched;
 * - `rescaling`: every replica was sent SIGTERM; relaunched on the target placement (or
 *   preempted when the target is empty) once all have exited.
 */
export type JobState = 'queued' | 'starting' | 'running' | 'rescaling' | 'preempted' | 'succeeded' | 'failed' | 'cancelled';

/** States a job never leaves. */
export const TERMINAL_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];
/** States in which the scheduler considers a job. */
export const ACTIVE_STATES: readonly JobState[] = ['queued', 'starting', 'running', 'rescaling', 'preempted'];

/** Whether `state` is terminal. */
export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

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
  /** Failures (replica exits other than 0 / 143) so far; compared with `spec.max_restarts`. */
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
  grad: GradParams | null;
  step: number;
  samples: number;
  /**
   * Raw training samples the job still had to process at its newest report that knew it
   * (docs/contract.md); null while the job has never reported it (e.g. no epoch count).
   */
  remaining_samples: number | null;
  last_report_at_ms: number | null;
  /** Why the job is in its state (last transition's reason). */
  reason: string;
}

/** One replica process of one attempt. */
export interface ReplicaRecord {
  job_id: string;
  attempt: number;
  rank: number;
  /** Device index (GPU index or CPU slot); null only for placeholder rows. */
  device: number | null;
  pid: number;
  /** Process start time as read from /proc (guards against PID reuse); '' when unknown. */
  proc_start: string;
  log_path: string;
  started_at_ms: number;
  exit_code: number | null;
  exited_at_ms: number | null;
}

/** One recorded transition or notable fact of a job: who, when, why. */
export interface JobEvent {
  id: number;
  job_id: string;
  at_ms: number;
  actor: string;
  kind: string;
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
  num_nodes: number;
  num_replicas: number;
  local_bsz: number;
  count: number;
  /** Mean time of one accumulation micro-step (s). */
  accum_step_time_s: number;
  /** Mean time of one optimizer step including synchronization (s). */
  optim_step_time_s: number;
}

/** A user's API token (stored hashed). */
export interface TokenRecord {
  hash: string;
  user: string;
  admin: boolean;
  created_at_ms: number;
}
