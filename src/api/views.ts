/** JSON shapes the API returns (shared with the typed client). */
import { jobInsight, type BatchDecisionView, type JobInsight } from '../control/loop/insight.js';
import type { Rejection } from '../policy/policy.js';
import { profileKeyOf } from '../core/profile-key.js';
import type { GradSample } from '../goodput/key-profile.js';
import type { BatchLimits, PerfParams, ProfilePoint } from '../goodput/types.js';
import type {
  JobEvent,
  JobRecord,
  JobSpec,
  JobState,
  Measurement,
  ProfileUse,
  ReplicaRecord,
  StoredKeyProfile,
} from '../store/types.js';

/** A job as the API shows it. Times are ISO-8601 strings or null. */
export interface JobSummary {
  id: string;
  name: string;
  user: string;
  state: JobState;
  /** Replicas allocated now (or targeted while starting/rescaling). */
  replicas: number;
  devices: number[];
  /** Relaunches after the first start (rescales and failure restarts). */
  restarts: number;
  failures: number;
  attempt: number | null;
  submitted_at: string;
  started_at: string | null;
  finished_at: string | null;
  step: number;
  samples: number;
  attained_service_gpu_s: number;
  reason: string;
  /** The latest health finding (why it was found hung), or null. */
  health: string | null;
  spec: JobSpec;
  /** Its profile key: the spec's `profile`, or the default of its command (docs/control-plane.md). */
  profile_key: string;
  /**
   * How its model uses the key's profile: `used` (it started from what earlier jobs measured),
   * `discarded` (its own measurements disagreed; the event says when and why), null (neither).
   */
  profile_use: ProfileUse | null;
  /** Batch, learning-rate scale, throughput, efficiency, goodput and speedups (control/loop/insight.ts). */
  insight: JobInsight;
  /**
   * GPU type of the devices it holds or is assigned (one type per job: nvidia-smi's name, Slurm's
   * GRES type, `cpu` for CPU slots; backends/device-type.ts); null while it holds none.
   */
  gpu_type: string | null;
}

/**
 * `POST /v1/jobs`'s answer: the job and what the user is told about it at submit
 * (admission/notes.ts; lines starting `warning: ` are warnings). A replayed submit has none.
 */
export interface SubmittedJob extends JobSummary {
  notes: string[];
}

/** `GET /v1/jobs/{id}`: the job, its current replicas and why it waits, if it does. */
export interface JobDetail extends JobSummary {
  current_replicas: ReplicaView[];
  rejection: Rejection | null;
  /** Why the running job is not preempted or resized although its spec allows it; null: it may be. */
  kept: string | null;
  /** When its newest reported checkpoint became durable (ISO); null: none reported. */
  checkpoint_at: string | null;
  /** Why a `starting` job is not launched yet (restart backoff, devices still held), or null. */
  launch_wait: string | null;
  perf: JobRecord['perf'];
  grad: JobRecord['grad'];
  limits: JobRecord['limits'];
  /** Raw training samples left at the newest report that knew it; null when unknown. */
  remaining_samples: JobRecord['remaining_samples'];
  /** Kind of the devices of this server: GPUs or CPU slots (attained service is in device-s). */
  device_kind: 'gpu' | 'cpu';
}

export interface ReplicaView {
  attempt: number;
  rank: number;
  device: number | null;
  /** Node the replica runs on. */
  node: string;
  /** Backend's id of the attempt (the Slurm job id); '' for local processes. */
  launch_id: string;
  pid: number;
  exit_code: number | null;
  started_at: string;
  exited_at: string | null;
}

export type EventView = Omit<JobEvent, 'at_ms'> & { at: string };

/** One device of a node with the job holding it, if any. */
export interface DeviceView {
  index: number;
  kind: 'gpu' | 'cpu';
  name: string;
  /** Its GPU type (backends/device-type.ts): the name for a GPU, `cpu` for a CPU slot. */
  type: string;
  /** The holding job's id; null when free or held by another user's job (non-admin callers). */
  job: string | null;
  /** Whether a job holds the device (whoever owns it). */
  busy: boolean;
  /** Its mark from the verdicts across ranks (docs/doctor.md): slow (placed last) or drained; absent when none. */
  mark?: { kind: 'slow' | 'drained'; reason: string };
}

export interface NodeView {
  name: string;
  /** Devices Goodput may use now (0 on a drained or down node). */
  usable: number;
  /** Why fewer than all devices are usable ('' when all are). */
  note: string;
  /** GPU types of its devices in order of first appearance (two for a machine with two kinds of GPU). */
  gpu_types: string[];
  devices: DeviceView[];
}

/** One profile in the list: its identity, its jobs, its sizes and the fitted throughput at each. */
export interface ProfileSummaryView {
  key: string;
  gpu_type: string;
  /** The user whose jobs' profile of the key it is (core/profile-scope.ts); null: the shared profile of all users' jobs. */
  scope: string | null;
  /** Jobs whose reports went into it (finished and running). */
  jobs: number;
  /** Replica counts measured, ascending. */
  measured_replicas: number[];
  /** Parameter count of the key's model as its latest job reported it (docs/contract.md); null when no job did. */
  model_parameters: number | null;
  /**
   * Per measured replica count, the samples/s the fitted model predicts at the best measured
   * local batch there (no accumulation); empty until fitted.
   */
  throughput: { replicas: number; samples_per_s: number }[];
  updated_at: string;
}

/** `GET /v1/profiles/{key}`: one profile per GPU type, in full. */
export interface ProfileView extends ProfileSummaryView {
  points: ProfilePoint[];
  /** Throughput parameters fitted on `points` (goodput/fit.ts); null until fitted. */
  perf: PerfParams | null;
  /** Gradient statistics by fraction of training done, ascending. */
  grad: GradSample[];
  /** Batch limits of the newest job that reported them. */
  limits: BatchLimits | null;
}

/** A token as listed: never the token itself. */
export interface TokenView {
  id: string;
  user: string;
  admin: boolean;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

/**
 * An epoch-ms time as ISO-8601; null when absent or when the stored value is no representable
 * time (a view never fails on stored data: such a time shows as unknown).
 */
export const iso = (ms: number | null): string | null => {
  if (ms === null || !Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return null;
  return new Date(ms).toISOString();
};

/**
 * The API view of a job; `latest` is its newest measurement, if any, `profile` the profile
 * its model starts from and `decision` its batch-size decision in force (all for the insight).
 */
/** The job as the API shows it; `gpu_type` is that of its devices (null: it holds none, or unknown here). */
export function jobView(
  job: JobRecord,
  latest?: Measurement,
  profile?: StoredKeyProfile,
  decision?: BatchDecisionView,
  gpu_type: string | null = null,
): JobSummary {
  return {
    id: job.id,
    name: job.name,
    user: job.user,
    state: job.state,
    replicas: job.allocation.length,
    devices: job.devices,
    restarts: Math.max(0, job.launches - 1),
    failures: job.failures,
    attempt: job.launches > 0 ? job.launches - 1 : null,
    submitted_at: iso(job.submitted_at_ms) ?? '',
    started_at: iso(job.started_at_ms),
    finished_at: iso(job.finished_at_ms),
    step: job.step,
    samples: job.samples,
    attained_service_gpu_s: Math.round(job.attained_service_gpu_s * 1000) / 1000,
    reason: job.reason,
    health: job.health,
    spec: job.spec,
    profile_key: profileKeyOf(job.spec),
    profile_use: job.profile_use,
    insight: jobInsight(job, latest, profile, decision),
    gpu_type,
  };
}

export function replicaView(r: ReplicaRecord): ReplicaView {
  return {
    attempt: r.attempt,
    rank: r.rank,
    device: r.device,
    node: r.node,
    launch_id: r.launch_id,
    pid: r.pid,
    exit_code: r.exit_code,
    started_at: iso(r.started_at_ms) ?? '',
    exited_at: iso(r.exited_at_ms),
  };
}

export function eventView(e: JobEvent): EventView {
  const { at_ms, ...rest } = e;
  return { ...rest, at: iso(at_ms) ?? '' };
}
