/**
 * Gangs: how a plain script's job is scheduled (docs/contract.md, "Plain scripts"). As torchrun
 * runs it, `-n N` is N processes started together, queued until N devices are free and never
 * resized, unless its spec says it resumes from its own snapshot (`resumable`). A job that
 * reports through the SDK is elastic whatever its spec says. Pure.
 */
import { PLACED_STATES } from '../../store/lifecycle.js';
import type { JobRecord } from '../../store/types.js';

/** Whether the job is run as a gang: plain (never reported, spec says sdk: false) and not resumable. */
export function isGang(job: Pick<JobRecord, 'spec' | 'last_report_at_ms' | 'checkpoint_on_stop'>): boolean {
  return (
    job.spec.sdk === false && job.spec.resumable !== true && job.last_report_at_ms === null && !job.checkpoint_on_stop
  );
}

/**
 * Sizes a resumable plain script may be given without exploring: all of its -n. It never reports,
 * so no measurement would ever let a policy grow it past its exploration size; as a torchrun
 * user expects, it gets up to -n when devices are free (fewer when they are not). 0 otherwise.
 */
export function resumableReach(job: Pick<JobRecord, 'spec' | 'last_report_at_ms' | 'checkpoint_on_stop'>): number {
  return job.spec.sdk === false &&
    job.spec.resumable === true &&
    job.last_report_at_ms === null &&
    !job.checkpoint_on_stop
    ? job.spec.max_replicas
    : 0;
}

/** Why a gang job waits, for its event (`unit`: "CPU slot(s)" or "GPU(s)"). */
export function gangWaitReason(n: number, free: number, unit: string): string {
  // One process is no gang: nothing to start together, and no smaller -n to suggest.
  if (n === 1) return `waiting for 1 ${unit.replace('(s)', '')}; ${Math.max(0, free)} free now`;
  return (
    `waiting for ${n} ${unit} at once: a plain script (it does not report through the Goodput ` +
    `SDK) runs as a gang of ${n} processes started together, as torchrun starts them, never ` +
    `fewer; ${Math.max(0, free)} free now. Submit with --resumable if it resumes from its own ` +
    `snapshot (then it may start smaller), or with a smaller -n`
  );
}

/**
 * The gang jobs that wait after a round (queued or preempted, given nothing), each with the key
 * of this wait (one event per wait) and its reason; `usable`: devices Goodput may use.
 */
export function gangWaits(
  jobs: readonly JobRecord[],
  allocations: Readonly<Record<string, readonly number[]>>,
  usable: number,
  unit: string,
): { job_id: string; key: string; reason: string }[] {
  const free =
    usable - jobs.filter((j) => PLACED_STATES.includes(j.state)).reduce((k, j) => k + j.allocation.length, 0);
  return jobs
    .filter(
      (j) => (j.state === 'queued' || j.state === 'preempted') && isGang(j) && (allocations[j.id]?.length ?? 0) === 0,
    )
    .map((j) => ({
      job_id: j.id,
      key: `gang-wait-${j.launches}`,
      reason: gangWaitReason(j.spec.max_replicas, free, unit),
    }));
}
