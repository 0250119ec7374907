import { crc32 } from 'node:zlib';
import type { BatchLimits, GradParams, PerfParams, StepCorrection } from '../../goodput/types.js';
import type { EventKind, FailureRecord, StopKind } from '../lifecycle.js';
import type { JobEvent, JobRecord, JobState, ProfileUse, ReplicaRecord, TokenRecord } from '../types.js';

/** One row as better-sqlite3 returns it: column name to value. */
export type Row = Record<string, unknown>;

function parse<T>(value: unknown): T | null {
  return typeof value === 'string' ? (JSON.parse(value) as T) : null;
}

/** A `jobs` row as a JobRecord (JSON columns parsed; NULL columns as null). */
export function toJob(r: Row): JobRecord {
  return {
    id: r.id as string,
    name: r.name as string,
    user: r.user as string,
    spec: JSON.parse(r.spec as string) as JobRecord['spec'],
    state: r.state as JobState,
    submitted_at_ms: r.submitted_at_ms as number,
    started_at_ms: (r.started_at_ms as number | null) ?? null,
    finished_at_ms: (r.finished_at_ms as number | null) ?? null,
    launches: r.launches as number,
    failures: r.failures as number,
    allocation: JSON.parse(r.allocation as string) as number[],
    devices: JSON.parse(r.devices as string) as number[],
    not_before_ms: r.not_before_ms as number,
    launched_at_ms: (r.launched_at_ms as number | null) ?? null,
    stop_requested_at_ms: (r.stop_requested_at_ms as number | null) ?? null,
    attained_service_gpu_s: r.attained_service_gpu_s as number,
    max_profiled_replicas: r.max_profiled_replicas as number,
    limits: parse<BatchLimits>(r.limits),
    perf: parse<PerfParams>(r.perf),
    correction: parse<StepCorrection>(r.correction),
    grad: parse<GradParams>(r.grad),
    step: r.step as number,
    samples: r.samples as number,
    remaining_samples: (r.remaining_samples as number | null) ?? null,
    model_parameters: (r.model_parameters as number | null) ?? null,
    last_report_at_ms: (r.last_report_at_ms as number | null) ?? null,
    checkpoint_at_ms: (r.checkpoint_at_ms as number | null) ?? null,
    checkpoint_on_stop: r.checkpoint_on_stop === 1,
    last_step_time_s: (r.last_step_time_s as number | null) ?? null,
    stop_kind: (r.stop_kind as StopKind | null) ?? null,
    last_failure: parse<FailureRecord>(r.last_failure),
    health: (r.health as string | null) ?? null,
    reason: r.reason as string,
    profile_use: (r.profile_use as ProfileUse | null) ?? null,
  };
}

/** A `replicas` row as a ReplicaRecord. */
export function toReplica(r: Row): ReplicaRecord {
  return {
    job_id: r.job_id as string,
    attempt: r.attempt as number,
    rank: r.rank as number,
    device: (r.device as number | null) ?? null,
    node: r.node as string,
    launch_id: r.launch_id as string,
    pid: r.pid as number,
    proc_start: r.proc_start as string,
    log_path: r.log_path as string,
    started_at_ms: r.started_at_ms as number,
    exit_code: (r.exit_code as number | null) ?? null,
    exited_at_ms: (r.exited_at_ms as number | null) ?? null,
    ...(r.gpu_type ? { gpu_type: r.gpu_type as string } : {}),
  };
}

/** Checksum of an event's text (actor, kind, reason, data as stored), kept beside it. */
export function eventCrc(actor: string, kind: string, reason: string, data: string): number {
  return crc32([actor, kind, reason, data].join('\u0000'));
}

/**
 * An `events` row as a JobEvent (its `data` JSON parsed). A row whose text no longer matches
 * its checksum (altered on disk, which quick_check does not see) is shown as such: its reason
 * says so and its data is `{ integrity: 'altered' }`. Rows from before checksums are shown as stored.
 */
export function toEvent(r: Row): JobEvent {
  if (
    typeof r.crc === 'number' &&
    r.crc !== eventCrc(r.actor as string, r.kind as string, r.reason as string, r.data as string)
  ) {
    return {
      id: r.id as number,
      job_id: r.job_id as string,
      at_ms: r.at_ms as number,
      actor: r.actor as string,
      kind: r.kind as EventKind,
      from_state: (r.from_state as JobState | null) ?? null,
      to_state: (r.to_state as JobState | null) ?? null,
      reason: `[this event was altered in the store: its checksum does not match] ${r.reason as string}`,
      data: { integrity: 'altered' },
    };
  }
  return {
    id: r.id as number,
    job_id: r.job_id as string,
    at_ms: r.at_ms as number,
    actor: r.actor as string,
    kind: r.kind as EventKind,
    from_state: (r.from_state as JobState | null) ?? null,
    to_state: (r.to_state as JobState | null) ?? null,
    reason: r.reason as string,
    data: JSON.parse(r.data as string) as Record<string, unknown>,
  };
}

/** A `tokens` row as a TokenRecord (expiry and revocation only when set). */
export function toToken(r: Row): TokenRecord {
  const token: TokenRecord = {
    hash: r.hash as string,
    user: r.user as string,
    admin: r.admin === 1,
    created_at_ms: r.created_at_ms as number,
  };
  if (typeof r.expires_at_ms === 'number') token.expires_at_ms = r.expires_at_ms;
  if (typeof r.revoked_at_ms === 'number') token.revoked_at_ms = r.revoked_at_ms;
  return token;
}
