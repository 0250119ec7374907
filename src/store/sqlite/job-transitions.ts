import { GoodputError } from '../../core/errors.js';
import { refusal, serviceSince, STOP_EVENT, type EventKind, type Operation, type StopKind } from '../lifecycle.js';
import type { DeviceBinding, NewReplica, TransitionDetail } from '../store.js';
import type { JobRecord, JobState } from '../types.js';
import { toJob } from './rows.js';
import type { StoreCore } from './store-core.js';

/**
 * The job-state writes of the SQLite store (the Store methods of the same names). Each is one
 * `transition`: the lifecycle check, the row patch and the event commit together or not at all.
 */

/**
 * The one way a job row changes state: checks that `op` may run in the job's state
 * (lifecycle.ts), applies `patch` (column -> value), writes the event, all in one transaction.
 * `to = null` keeps the state. `patch` gets the time the event is recorded at, so a column set to
 * "now" and the event agree. Returns the job as committed.
 */
export function transition(
  core: StoreCore,
  id: string,
  op: Operation,
  to: JobState | null,
  actor: string,
  kind: EventKind,
  reason: string,
  patch: (job: JobRecord, now: number) => Record<string, string | number | null>,
  data: Record<string, unknown> | ((job: JobRecord) => Record<string, unknown>) = {},
): JobRecord {
  const now = core.now_ms();
  core.db
    .transaction(() => {
      const row = core.jobRow(id);
      if (!row) throw new GoodputError('E_NOT_FOUND', `no job ${id}`);
      const job = toJob(row);
      const refused = refusal(op, job.state);
      if (refused !== undefined)
        throw new GoodputError('E_CONFLICT', `job ${id} is ${job.state}; cannot ${op} (${refused})`);
      const values = { ...patch(job, now), state: to ?? job.state, reason };
      const columns = Object.keys(values);
      core.db
        .prepare(`UPDATE jobs SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`)
        .run(...Object.values(values), id);
      const payload = typeof data === 'function' ? data(job) : data;
      core.event(id, now, actor, kind, job.state, to ?? job.state, reason, JSON.stringify(payload));
    })
    .immediate();
  core.advanceHighWater();
  return core.mustGet(id);
}

/** Store.assignJob. */
export function assignJob(
  core: StoreCore,
  id: string,
  binding: DeviceBinding,
  not_before_ms: number,
  actor: string,
  reason: string,
): JobRecord {
  return transition(
    core,
    id,
    'assign',
    'starting',
    actor,
    'assigned',
    reason,
    () => ({
      allocation: JSON.stringify(binding.allocation),
      devices: JSON.stringify(binding.devices),
      not_before_ms,
    }),
    { binding },
  );
}

/** Store.retargetJob. */
export function retargetJob(
  core: StoreCore,
  id: string,
  binding: DeviceBinding,
  actor: string,
  reason: string,
): JobRecord {
  return transition(
    core,
    id,
    'retarget',
    null,
    actor,
    'retargeted',
    reason,
    () => ({
      allocation: JSON.stringify(binding.allocation),
      devices: JSON.stringify(binding.devices),
    }),
    { binding },
  );
}

/** Store.launchJob: records the replicas of the new attempt with the state change. */
export function launchJob(
  core: StoreCore,
  id: string,
  replicas: readonly NewReplica[],
  actor: string,
  reason: string,
): JobRecord {
  return transition(
    core,
    id,
    'launch',
    'running',
    actor,
    'launched',
    reason,
    (job, now) => {
      const insert = core.db.prepare(
        'INSERT OR REPLACE INTO replicas (job_id, attempt, rank, device, node, launch_id, pid, ' +
          'proc_start, log_path, started_at_ms, gpu_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      for (const r of replicas)
        insert.run(
          id,
          job.launches,
          r.rank,
          r.device,
          r.node,
          r.launch_id,
          r.pid,
          r.proc_start,
          r.log_path,
          r.started_at_ms,
          r.gpu_type ?? '',
        );
      return {
        launches: job.launches + 1,
        launched_at_ms: now,
        started_at_ms: job.started_at_ms ?? now,
        stop_requested_at_ms: null,
      };
    },
    (job) => ({
      attempt: job.launches,
      replicas: replicas.map((r) => ({
        rank: r.rank,
        node: r.node,
        device: r.device,
        pid: r.pid,
        ...(r.launch_id ? { launch_id: r.launch_id } : {}),
      })),
    }),
  );
}

/** Store.stopJob: banks the attempt's service and counts a failure unless it is a rescale. */
export function stopJob(
  core: StoreCore,
  id: string,
  binding: DeviceBinding,
  kind: StopKind,
  actor: string,
  reason: string,
  detail: TransitionDetail,
): JobRecord {
  return transition(
    core,
    id,
    'stop',
    'rescaling',
    actor,
    STOP_EVENT[kind],
    reason,
    (job, now) => ({
      ...attemptEnd(job, now, detail),
      allocation: JSON.stringify(binding.allocation),
      devices: JSON.stringify(binding.devices),
      stop_requested_at_ms: now,
      stop_kind: kind,
      failures: job.failures + (kind === 'rescale' ? 0 : 1),
      ...(kind === 'hung' ? { health: reason } : {}),
    }),
    { binding, failure: kind !== 'rescale', ...attemptEndData(detail) },
  );
}

/** Store.relaunchJob. */
export function relaunchJob(
  core: StoreCore,
  id: string,
  not_before_ms: number,
  actor: string,
  reason: string,
): JobRecord {
  return transition(
    core,
    id,
    'relaunch',
    'starting',
    actor,
    'relaunch',
    reason,
    () => ({ not_before_ms, stop_requested_at_ms: null, stop_kind: null }),
    { not_before_ms },
  );
}

/** Store.requeueJob: back to queued when it never launched, else preempted. */
export function requeueJob(core: StoreCore, id: string, actor: string, reason: string): JobRecord {
  const job = core.mustGet(id);
  const to: JobState = job.launches === 0 ? 'queued' : 'preempted';
  return transition(core, id, 'requeue', to, actor, 'requeued', reason, () => ({
    allocation: '[]',
    devices: '[]',
    stop_requested_at_ms: null,
    stop_kind: null,
  }));
}

/** Store.finishJob: banks the attempt's service; a failure detail counts a failure. */
export function finishJob(
  core: StoreCore,
  id: string,
  to: 'succeeded' | 'failed' | 'cancelled',
  actor: string,
  reason: string,
  detail: TransitionDetail,
): JobRecord {
  return transition(
    core,
    id,
    'finish',
    to,
    actor,
    to,
    reason,
    (job, now) => ({
      ...attemptEnd(job, now, detail),
      allocation: '[]',
      devices: '[]',
      finished_at_ms: now,
      stop_kind: null,
      ...(detail.failure ? { failures: job.failures + 1 } : {}),
    }),
    attemptEndData(detail),
  );
}

/**
 * The columns every end of an attempt writes (a stop or a finish): the attempt's service banked,
 * no launch in force, and the failure that ended it, when one did.
 */
function attemptEnd(job: JobRecord, now: number, detail: TransitionDetail): Record<string, string | number | null> {
  return {
    attained_service_gpu_s: job.attained_service_gpu_s + serviceSince(job, now),
    launched_at_ms: null,
    ...(detail.failure ? { last_failure: JSON.stringify(detail.failure) } : {}),
  };
}

/** The event data of an end of an attempt: the caller's, and the failure that ended it, when one did. */
function attemptEndData(detail: TransitionDetail): Record<string, unknown> {
  return { ...detail.data, ...(detail.failure ? { last_failure: detail.failure } : {}) };
}
