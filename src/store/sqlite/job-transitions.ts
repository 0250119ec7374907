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
 * One asked-for change of one job row: the store, the job, and who asks and why (the event's
 * actor and reason). Every Store job-state write takes one.
 */
export interface JobChange {
  core: StoreCore;
  id: string;
  actor: string;
  reason: string;
}

/**
 * A lifecycle step: the operation checked against the job's state (lifecycle.ts), the state it
 * leads to (null keeps the state) and the kind of event it writes.
 */
export interface Step {
  op: Operation;
  to: JobState | null;
  kind: EventKind;
}

/** The steps whose target state and event are fixed (a stop, a requeue and a finish pick theirs per call). */
const STEPS = {
  assign: { op: 'assign', to: 'starting', kind: 'assigned' },
  retarget: { op: 'retarget', to: null, kind: 'retargeted' },
  launch: { op: 'launch', to: 'running', kind: 'launched' },
  relaunch: { op: 'relaunch', to: 'starting', kind: 'relaunch' },
} as const satisfies Record<string, Step>;

/** The row columns a change of assigned devices writes. */
function bindingColumns(binding: DeviceBinding): Record<string, string> {
  return { allocation: JSON.stringify(binding.allocation), devices: JSON.stringify(binding.devices) };
}

/** The row columns of a job that holds no devices. */
const NO_DEVICES = { allocation: '[]', devices: '[]' } as const;

/**
 * The one way a job row changes state: checks that `step.op` may run in the job's state
 * (lifecycle.ts), applies `patch` (column -> value), writes the event, all in one transaction.
 * `patch` gets the time the event is recorded at, so a column set to "now" and the event agree.
 * Returns the job as committed.
 */
export function transition(
  change: JobChange,
  step: Step,
  patch: (job: JobRecord, now: number) => Record<string, string | number | null>,
  data: Record<string, unknown> | ((job: JobRecord) => Record<string, unknown>) = {},
): JobRecord {
  const { core, id, actor, reason } = change;
  const { op, to, kind } = step;
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
export function assignJob(change: JobChange, binding: DeviceBinding, not_before_ms: number): JobRecord {
  return transition(change, STEPS.assign, () => ({ ...bindingColumns(binding), not_before_ms }), { binding });
}

/** Store.retargetJob. */
export function retargetJob(change: JobChange, binding: DeviceBinding): JobRecord {
  return transition(change, STEPS.retarget, () => bindingColumns(binding), { binding });
}

/** Store.launchJob: records the replicas of the new attempt with the state change. */
export function launchJob(change: JobChange, replicas: readonly NewReplica[]): JobRecord {
  const { core, id } = change;
  return transition(
    change,
    STEPS.launch,
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
  change: JobChange,
  binding: DeviceBinding,
  kind: StopKind,
  detail: TransitionDetail,
): JobRecord {
  return transition(
    change,
    { op: 'stop', to: 'rescaling', kind: STOP_EVENT[kind] },
    (job, now) => ({
      ...attemptEnd(job, now, detail),
      ...bindingColumns(binding),
      stop_requested_at_ms: now,
      stop_kind: kind,
      failures: job.failures + (kind === 'rescale' ? 0 : 1),
      ...(kind === 'hung' ? { health: change.reason } : {}),
    }),
    { binding, failure: kind !== 'rescale', ...attemptEndData(detail) },
  );
}

/** Store.relaunchJob. */
export function relaunchJob(change: JobChange, not_before_ms: number): JobRecord {
  return transition(change, STEPS.relaunch, () => ({ not_before_ms, stop_requested_at_ms: null, stop_kind: null }), {
    not_before_ms,
  });
}

/** Store.requeueJob: back to queued when it never launched, else preempted. */
export function requeueJob(change: JobChange): JobRecord {
  const job = change.core.mustGet(change.id);
  const to: JobState = job.launches === 0 ? 'queued' : 'preempted';
  return transition(change, { op: 'requeue', to, kind: 'requeued' }, () => ({
    ...NO_DEVICES,
    stop_requested_at_ms: null,
    stop_kind: null,
  }));
}

/** Store.finishJob: banks the attempt's service; a failure detail counts a failure. */
export function finishJob(
  change: JobChange,
  to: 'succeeded' | 'failed' | 'cancelled',
  detail: TransitionDetail,
): JobRecord {
  return transition(
    change,
    { op: 'finish', to, kind: to },
    (job, now) => ({
      ...attemptEnd(job, now, detail),
      ...NO_DEVICES,
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
