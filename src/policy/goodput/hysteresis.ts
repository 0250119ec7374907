/**
 * Tiresias' hysteresis for jobs of unknown length (docs/policy.md, "Jobs of unknown length").
 * Least attained service alone swaps two such jobs whenever one overtakes the other, and every
 * swap is a restart; here attained service is discretized into priority queues, a job keeps an
 * allocation for a minimum time slice, a job that has waited long is promoted (starvation guard)
 * and a job is stopped at most `max_preemptions` times. Pure: no clock, no I/O.
 */
import type { PolicyJob } from '../../core/cluster.js';

/** The knobs of the hysteresis (part of GoodputPolicyParams). */
export interface HysteresisParams {
  /** Attained service (GPU-s) at which a job of unknown length leaves the first queue. */
  queue_base_gpu_s: number;
  /** Each further queue starts this many times later than the previous one. */
  queue_factor: number;
  /** Number of queues (1 = plain FIFO among jobs of unknown length). */
  queue_count: number;
  /** A job keeps a new allocation for at least this many restart delays. */
  min_slice_restarts: number;
  /**
   * A waiting job whose age exceeds this multiple of its attained service (at least one slice)
   * is put back into the first queue; 0 disables the guard.
   */
  starvation_factor: number;
  /** A running job of unknown length that has been stopped this many times is not stopped again. */
  max_preemptions: number;
}

/** Whether the policy treats the job as one of unknown length (no declared remaining work). */
export function unknownLength(job: PolicyJob): boolean {
  return job.remaining_samples === undefined;
}

/** Smallest attained service (GPU-s) of queue `q` (0 for the first queue). */
export function queueFloor_gpu_s(q: number, p: HysteresisParams): number {
  return q <= 0 ? 0 : p.queue_base_gpu_s * Math.pow(p.queue_factor, q - 1);
}

/**
 * Attained service (GPU-s) at which a job leaves queue `q`: the next queue's floor, and for the
 * last queue, which has no end, its floor times `queue_factor` (at least `queue_base_gpu_s`).
 */
export function queueEnd_gpu_s(q: number, p: HysteresisParams): number {
  if (q + 1 < p.queue_count) return queueFloor_gpu_s(q + 1, p);
  return Math.max(queueFloor_gpu_s(q, p) * p.queue_factor, p.queue_base_gpu_s);
}

/** Minimum time (s) a job keeps a new allocation. */
export function minSlice_s(p: HysteresisParams, restart_delay_s: number): number {
  return p.min_slice_restarts * restart_delay_s;
}

/**
 * Queue of a job of unknown length: how many thresholds its attained service has passed, or 0
 * (the first queue) while it starves: waiting, with an age above `starvation_factor` times its
 * attained service (at least one slice).
 */
export function serviceQueue(
  job: PolicyJob,
  waiting: boolean,
  now_s: number,
  p: HysteresisParams,
  restart_delay_s: number,
): number {
  const age_s = Math.max(0, now_s - job.submitted_at_s);
  const served = Math.max(job.attained_service_gpu_s, minSlice_s(p, restart_delay_s));
  if (waiting && p.starvation_factor > 0 && age_s > p.starvation_factor * served) return 0;
  let q = 0;
  while (q + 1 < p.queue_count && job.attained_service_gpu_s >= queueFloor_gpu_s(q + 1, p)) q += 1;
  return q;
}

/** Why the job keeps its allocation this round (see HysteresisParams). */
export type HoldReason = 'MIN_SLICE' | 'MAX_PREEMPTIONS';

/**
 * Whether a running job of unknown length must keep its allocation this round: it has held it
 * for less than the minimum slice, or it has been stopped `max_preemptions` times already.
 */
export function holdReason(
  job: PolicyJob,
  now_s: number,
  p: HysteresisParams,
  restart_delay_s: number,
): HoldReason | undefined {
  if (!unknownLength(job)) return undefined;
  if (job.restarts >= p.max_preemptions) return 'MAX_PREEMPTIONS';
  if (job.allocated_since_s !== undefined && now_s - job.allocated_since_s < minSlice_s(p, restart_delay_s))
    return 'MIN_SLICE';
  return undefined;
}

/**
 * Which way a running job may not be resized this round (docs/policy.md, "Decisions that need the
 * gain to be sure"): the reverse of its last resize, until it has reported measurements at the
 * size that resize gave it. Until then its model is a refit of the points the resize was decided
 * on, and a reversal by it (1 -> 3 -> 1 -> 3 within seconds on a busy host) undoes a restart
 * for no new fact. 'grow': it shrank last, so it keeps at most its size; 'shrink': it grew last,
 * so it keeps at least its size (or is stopped). A stop is not a resize: it is always allowed.
 */
export function blockedDirection(job: PolicyJob): 'grow' | 'shrink' | undefined {
  const last = job.last_resize;
  if (!last || last.measured_since) return undefined;
  return last.grew ? 'shrink' : 'grow';
}
