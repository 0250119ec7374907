/** Builds the policy's view of the cluster from stored jobs (pure over its inputs). */
import { fairQueue } from './fair-queue.js';
import { isGang, resumableReach } from './gang.js';
import type { ClusterSnapshot, JobTypes, NodeInfo, PolicyJob, ShareUsage } from '../../core/cluster.js';
import { teamOf, type SharesConfig } from '../../policy/shares/index.js';
import { profileKeyOf } from '../../core/profile-key.js';
import type { BatchLimits, GoodputModel } from '../../goodput/types.js';
import { jobModel } from '../../model/job-fit.js';
import { buildPolicyJob } from '../../model/policy-job.js';
import { PLACED_STATES, serviceSince } from '../../store/lifecycle.js';
import type { JobRecord, JobSpec, StoredKeyProfile } from '../../store/types.js';

/**
 * Batch limits assumed before a job has reported its own: the fixed batch (or 32) as B0, no
 * growth beyond the cap, no accumulation.
 */
export function defaultLimits(spec: JobSpec): BatchLimits {
  const init = spec.fixed_batch_size ?? 32;
  const max = Math.max(init, spec.fixed_batch_size ?? spec.batch_size_cap ?? init);
  return { init_batch_size: init, max_batch_size: max, min_local_bsz: 1, max_local_bsz: max, accumulation: false };
}

/**
 * The job's limits: reported ones, else (an adaptive batch) those the newest job of its profile
 * reported, else the defaults.
 */
export function limitsOf(job: JobRecord, profile?: StoredKeyProfile): BatchLimits {
  if (job.limits) return job.limits;
  if (profile?.limits && job.spec.fixed_batch_size === undefined) return profile.limits;
  return defaultLimits(job.spec);
}

/**
 * The fitted model once the job has reported times and gradient statistics, by the rule the
 * simulator uses (model/job-fit.ts `jobModel`). With the profile of its key
 * (control/reports/profile-book.ts: not discarded, measured by other jobs), a job that has not reported
 * yet takes the profile's fitted parameters, corrected by the profile's measurements, and its
 * gradient statistics at the start of training; its own refits already include the profile's
 * points, and their correction (JobRecord.correction) is saved with the fit.
 */
export function modelOf(job: JobRecord, profile?: StoredKeyProfile): GoodputModel | undefined {
  return jobModel({
    fit: job.perf ? { perf: job.perf, correction: job.correction } : null,
    grad: job.grad,
    ...(profile ? { profile } : {}),
    ...(profile?.perf ? { profile_perf: profile.perf } : {}),
    corrected: profile !== undefined,
    limits: limitsOf(job, profile),
  });
}

/** Holds devices right now (its allocation is in force or about to be). */
export function holdsDevices(job: JobRecord): boolean {
  return PLACED_STATES.includes(job.state) && job.allocation.length > 0;
}

/**
 * Why a running job keeps its devices although its spec did not pin it, or undefined when it
 * does not: it has never checkpointed and does not checkpoint when stopped (a plain job without
 * the SDK), so a stop would lose all its progress, and its spec does not say `preemptible: true`.
 * Every policy sees such a job as non-preemptible.
 */
export function stopProtection(job: JobRecord): string | undefined {
  if (job.state !== 'running' || job.spec.preemptible !== undefined) return undefined;
  if (job.checkpoint_on_stop || job.checkpoint_at_ms !== null || job.spec.resumable === true) return undefined;
  return 'not preempted or resized: no checkpoint yet, so a stop would lose all its progress; set preemptible: true to allow';
}

/**
 * Seconds of progress a stop of the job now would lose: the time its running attempt has run
 * since the later of its launch and its newest reported checkpoint; 0 when it is not running or
 * checkpoints when stopped (docs/contract.md).
 */
export function progressAtRisk_s(job: JobRecord, now_ms: number): number {
  if (job.state !== 'running' || job.launched_at_ms === null || job.checkpoint_on_stop || job.spec.resumable === true)
    return 0;
  return Math.max(0, now_ms - Math.max(job.launched_at_ms, job.checkpoint_at_ms ?? 0)) / 1000;
}

/**
 * One policy job from a stored job, at time `now_ms`; `profile`: the profile of its key its
 * model starts from (ProfileBook.forRound), which also counts as measured sizes; `per_type`: what
 * it knows per GPU type (control/loop/typed-snapshot.ts `jobTypes`).
 */
export function toPolicyJob(
  job: JobRecord,
  now_ms: number,
  profile?: StoredKeyProfile,
  per_type?: JobTypes,
  shares?: SharesConfig,
  resize?: LastResize,
): PolicyJob {
  const model = modelOf(job, profile);
  const pj = buildPolicyJob({
    id: job.id,
    submitted_at_s: job.submitted_at_ms / 1000,
    attained_service_gpu_s: job.attained_service_gpu_s + serviceSince(job, now_ms),
    // A plain script's gang starts whole or not at all, and is never shrunk (admission/admit.ts).
    min_replicas: isGang(job) ? job.spec.max_replicas : job.spec.min_replicas,
    max_replicas: job.spec.max_replicas,
    // A resumable plain script never reports: its reach counts as measured (gang.ts).
    own_max_replicas: Math.max(job.max_profiled_replicas, resumableReach(job)),
    ...(profile ? { profile_max_replicas: profile.max_measured_replicas } : {}),
    profile_key: profileKeyOf(job.spec),
    model_from_profile: profile !== undefined,
    restarts: Math.max(0, job.launches - 1),
    preemptible: job.spec.preemptible !== false && stopProtection(job) === undefined,
    priority: job.spec.priority,
    limits: limitsOf(job, profile),
    ...(job.spec.fixed_batch_size !== undefined ? { fixed_batch_size: job.spec.fixed_batch_size } : {}),
    ...(job.spec.batch_size_cap !== undefined ? { batch_size_cap: job.spec.batch_size_cap } : {}),
    ...(model ? { model } : {}),
    // Known only when the SDK knows the epoch count (docs/contract.md); else the policy falls
    // back to attained service.
    ...(job.remaining_samples !== null ? { remaining_samples: job.remaining_samples } : {}),
    progress_at_risk_s: progressAtRisk_s(job, now_ms),
    ...(job.state === 'running' && job.launched_at_ms !== null ? { allocated_since_s: job.launched_at_ms / 1000 } : {}),
    ...(per_type ? { per_type } : {}),
    ...(resize && job.allocation.length > 0 ? { last_resize: lastResize(job, resize) } : {}),
  });
  return { ...pj, owner: job.user, team: teamOf(shares, job.user) };
}

/** A job's last resize between two positive sizes, as the round applied it (control/loop/round.ts). */
export interface LastResize {
  grew: boolean;
  at_ms: number;
}

/**
 * The resize and whether the job has been measured at its size since: an attempt launched after
 * the resize has reported (every report of an attempt is at its size). Before that its model is a
 * refit of the points the resize was decided on.
 */
function lastResize(job: JobRecord, resize: LastResize): { grew: boolean; measured_since: boolean } {
  const launched = job.launched_at_ms;
  const measured_since =
    job.state === 'running' &&
    launched !== null &&
    launched >= resize.at_ms &&
    job.last_report_at_ms !== null &&
    job.last_report_at_ms > launched;
  return { grew: resize.grew, measured_since };
}

/**
 * The snapshot of one scheduling round over `jobs` (active jobs, submission order); `profiles`:
 * by job id, the profile each job's model starts from; `per_type`: by job id, its facts per GPU type.
 * Waiting jobs of several users are presented in the fair order of fair-queue.ts (their places and
 * submission times); every job names its owner and team, and `sharing` gives the shares layer
 * (policy/shares) the teams and the decayed usage.
 */
export async function buildSnapshot(
  nodes: readonly NodeInfo[],
  jobs: readonly JobRecord[],
  now_ms: number,
  profiles?: ReadonlyMap<string, StoredKeyProfile>,
  per_type?: ReadonlyMap<string, JobTypes>,
  sharing?: { config: SharesConfig; usage?: ShareUsage },
  resizes?: ReadonlyMap<string, LastResize>,
  // util/turns.ts's Turns, by its shape: the dashboard's bundle reads this module, not Node's timers.
  turns?: { pause(): Promise<void> },
): Promise<ClusterSnapshot> {
  const allocations: Record<string, readonly number[]> = {};
  for (const job of jobs) if (holdsDevices(job)) allocations[job.id] = job.allocation;
  // 3,000 jobs at 16,384 GPUs: 20-30 ms of work, given way within (util/turns.ts).
  const policyJobs: PolicyJob[] = [];
  for (const j of fairQueue(jobs)) {
    await turns?.pause();
    policyJobs.push(
      toPolicyJob(j, now_ms, profiles?.get(j.id), per_type?.get(j.id), sharing?.config, resizes?.get(j.id)),
    );
  }
  return {
    now_s: now_ms / 1000,
    nodes,
    jobs: policyJobs,
    allocations,
    ...(sharing
      ? {
          shares: {
            teams: sharing.config.teams,
            half_life_s: sharing.config.half_life_s,
            ...(sharing.usage ? { usage: sharing.usage } : {}),
          },
        }
      : {}),
  };
}
