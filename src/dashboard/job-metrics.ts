/**
 * What the dashboard shows of a job, computed from its record and reports with the same goodput
 * model the scheduler uses (goodput/): measured throughput x statistical efficiency.
 */
import { efficiency } from '../goodput/efficiency.js';
import { currentSpeedup } from '../control/loop/insight.js';
import type { Rejection } from '../policy/policy.js';
import type { JobRecord, Measurement, StoredKeyProfile } from '../store/types.js';
import type { JobRow, JobSeries } from './types.js';

/** Measured rates of one report entry. */
export interface MeasuredRates {
  batch_size: number;
  /** Samples per second. */
  throughput: number;
  efficiency: number | null;
  goodput: number | null;
}

/**
 * Rates of one measurement: the global batch is local_bsz x (accum_steps + 1) x replicas, one
 * optimizer step takes `step_time_s`; efficiency needs the gradient statistics and the job's
 * reference batch (`init_batch_size`), so it is null until both are known.
 */
export function measuredRates(m: Measurement, init_batch_size: number | undefined): MeasuredRates {
  const batch_size = m.local_bsz * (m.accum_steps + 1) * m.num_replicas;
  const throughput = m.step_time_s > 0 ? batch_size / m.step_time_s : 0;
  const known = init_batch_size !== undefined && m.grad_sqr != null && m.grad_var != null;
  const eff = known ? efficiency({ sqr: m.grad_sqr!, var: m.grad_var! }, init_batch_size, batch_size) : null;
  return { batch_size, throughput, efficiency: eff, goodput: eff === null ? null : throughput * eff };
}

const WAITING = new Set(['queued', 'preempted', 'starting']);

/**
 * One row of the jobs table; `latest` is the job's newest report entry, if any, and `profile` the
 * profile its model starts from (Controller.profilesFor), so that its speedup is the one the
 * scheduler and `goodput ls` see.
 */
export function jobRow(
  job: JobRecord,
  latest: Measurement | undefined,
  rejection: Rejection | undefined,
  now_ms: number,
  profile?: StoredKeyProfile,
): JobRow {
  const rates = latest ? measuredRates(latest, job.limits?.init_batch_size) : undefined;
  const remaining = job.remaining_samples;
  const progress =
    remaining === null ? null : job.samples + remaining > 0 ? job.samples / (job.samples + remaining) : 1;
  const running = job.state === 'running';
  const eta_ms =
    running && remaining !== null && rates && rates.throughput > 0
      ? now_ms + (remaining / rates.throughput) * 1000
      : null;
  return {
    id: job.id,
    name: job.name,
    user: job.user,
    state: job.state,
    replicas: job.allocation.length,
    batch_size: rates?.batch_size ?? null,
    goodput: rates?.goodput ?? null,
    throughput: rates?.throughput ?? null,
    speedup: running ? currentSpeedup(job, latest, profile) : null,
    progress: job.state === 'succeeded' ? 1 : progress,
    eta_ms,
    restarts: Math.max(0, job.launches - 1),
    reason: WAITING.has(job.state) && rejection ? rejection.message : job.reason,
    submitted_ms: job.submitted_at_ms,
  };
}

/** A silence between two reports of one attempt longer than this many typical intervals (and GAP_MIN_MS) is a gap. */
const GAP_INTERVALS = 10;
const GAP_MIN_MS = 30_000;

/**
 * Time series of a job's reports (oldest first), columnar. Between two attempts (a stop:
 * rescale, failure, preemption) no replica ran: a point with 0 replicas and no rates at the end
 * of the earlier attempt's reports, so the replicas chart drops to 0 and no rate is drawn across
 * the stop; likewise after the last report of a job that is not running now (`running` false). A
 * long silence within one attempt (a hang) is a gap in the rates, its replicas unchanged.
 */
export function jobSeries(
  reports: readonly (Measurement & { attempt?: number })[],
  init_batch_size: number | undefined,
  running = true,
): JobSeries {
  const s: JobSeries = {
    t_ms: [],
    replicas: [],
    local_bsz: [],
    accum_steps: [],
    batch_size: [],
    throughput: [],
    efficiency: [],
    goodput: [],
  };
  const gap = (t_ms: number, replicas: number) => {
    s.t_ms.push(t_ms);
    s.replicas.push(replicas);
    for (const k of ['local_bsz', 'accum_steps', 'batch_size', 'throughput', 'efficiency', 'goodput'] as const)
      s[k].push(null);
  };
  const intervals = reports
    .slice(1)
    .map((m, i) => m.time_s - reports[i]!.time_s)
    .sort((a, b) => a - b);
  const silence_ms = Math.max(GAP_MIN_MS, GAP_INTERVALS * 1000 * (intervals[Math.floor(intervals.length / 2)] ?? 0));
  let previous: (Measurement & { attempt?: number }) | undefined;
  for (const m of reports) {
    const t_ms = Math.round(m.time_s * 1000);
    if (previous !== undefined) {
      const end_ms = Math.round(previous.time_s * 1000) + 1;
      if (m.attempt !== previous.attempt) gap(end_ms, 0);
      else if (t_ms - end_ms > silence_ms) gap(end_ms, previous.num_replicas);
    }
    const r = measuredRates(m, init_batch_size);
    s.t_ms.push(t_ms);
    s.replicas.push(m.num_replicas);
    s.local_bsz.push(m.local_bsz);
    s.accum_steps.push(m.accum_steps);
    s.batch_size.push(r.batch_size);
    s.throughput.push(r.throughput);
    s.efficiency.push(r.efficiency);
    s.goodput.push(r.goodput);
    previous = m;
  }
  if (previous !== undefined && !running) gap(Math.round(previous.time_s * 1000) + 1, 0);
  return s;
}
