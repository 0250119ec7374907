/**
 * The control plane's view of a cluster of several GPU types for a typed policy
 * (policy/typed.ts): the same TypedSnapshot the mixed-type simulator hands the goodput policy, so
 * that one policy decides in both. A job's model on a type is the control plane's one model
 * (control/snapshot.ts `modelOf`, model/job-fit.ts): on the type it runs (or last ran) on, its
 * own fit with its key's profile there; on another type, its key's profile there. Pure over its
 * inputs.
 */
import type { ClusterSnapshot, NodeInfo } from '../core/cluster.js';
import { profileKeyOf } from '../core/profile-key.js';
import { throughput } from '../goodput/throughput.js';
import type { GoodputModel } from '../goodput/types.js';
import type { TypedJob, TypedSnapshot } from '../policy/typed.js';
import { serviceSince } from '../store/lifecycle.js';
import type { JobRecord, StoredKeyProfile } from '../store/types.js';
import { limitsOf, modelOf, stopProtection } from './snapshot.js';

/** Seconds a restart is assumed to cost a live job (a stop, a checkpoint load, a relaunch). */
export const LIVE_RESTART_S = 30;

/** What the builder needs of one job besides its record. */
export interface TypedJobInput {
  /** The record, its allocation in the policy's nodes (control/typed-nodes.ts `toGroups`). */
  job: JobRecord;
  /** The type its own measurements come from (where it runs or last ran); undefined before it has any. */
  own_type: string | undefined;
  /** Its key's profile per type (with a fit); absent types have none. */
  profiles: ReadonlyMap<string, StoredKeyProfile>;
  /** Whether its model on its own type includes its key's profile there (ProfileBook.forRound gave it one). */
  own_profile: StoredKeyProfile | undefined;
}

/** Samples/s of `model` on one GPU at its initial batch (Sia's one-GPU bootstrap figure). */
function oneGpuRate(model: GoodputModel): number {
  const bsz = Math.max(1, Math.min(model.limits.init_batch_size, model.limits.max_local_bsz));
  return throughput(model.perf, 1, 1, bsz, 0);
}

/**
 * One-GPU rate of a type where neither a job nor its key has measured anything, relative to the
 * mean of the types where they have. Below 1, so that no job moves to a type for lack of evidence
 * (the policy rounds its costs to 0.01: 0.95 is still visible), while it still runs there when
 * that is all that is free.
 */
export const UNKNOWN_TYPE_DISCOUNT = 0.95;

/**
 * One typed job. A type where neither the job nor its key has measured anything gets the mean
 * one-GPU rate of the types where they have, times UNKNOWN_TYPE_DISCOUNT. With nothing measured
 * anywhere, every type gets 1, except that a placed job's other types get the discount.
 */
export function typedJob(input: TypedJobInput, types: readonly string[], now_ms: number): TypedJob {
  const { job, own_type, profiles } = input;
  const models = new Map<string, GoodputModel>();
  for (const t of types) {
    const profile = profiles.get(t);
    const model =
      t === own_type
        ? modelOf(job, input.own_profile)
        : profile
          ? modelOf({ ...job, perf: null, correction: null }, profile)
          : undefined;
    if (model) models.set(t, model);
  }
  const known = [...models.values()].map(oneGpuRate).filter((r) => Number.isFinite(r) && r > 0);
  const mean = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : 1;
  const one: Record<string, number> = {};
  const max_profiled: Record<string, number> = {};
  for (const t of types) {
    const m = models.get(t);
    const rate = m ? oneGpuRate(m) : NaN;
    // Nothing known anywhere: the type it holds counts as known.
    const unknown = known.length > 0 || (own_type !== undefined && t !== own_type) ? UNKNOWN_TYPE_DISCOUNT : 1;
    one[t] = Number.isFinite(rate) && rate > 0 ? rate : mean * unknown;
    const fromProfile = profiles.get(t)?.max_measured_replicas ?? 0;
    max_profiled[t] = t === own_type ? Math.max(job.max_profiled_replicas, fromProfile) : fromProfile;
  }
  const holding = job.allocation.length > 0 && ['starting', 'running', 'rescaling'].includes(job.state);
  return {
    id: job.id,
    key: profileKeyOf(job.spec),
    submitted_at_s: job.submitted_at_ms / 1000,
    attained_service_gpu_s: job.attained_service_gpu_s + serviceSince(job, now_ms),
    restarts: Math.max(0, job.launches - 1),
    max_replicas: job.spec.max_replicas,
    ...(job.spec.fixed_batch_size !== undefined ? { fixed_batch_size: job.spec.fixed_batch_size } : {}),
    max_profiled,
    model: (t) => models.get(t),
    limits: (t) => limitsOf(job, t === own_type ? input.own_profile : profiles.get(t)),
    one_gpu_samples_per_s: one,
    // Unknown length: as much again as done so far (the attained-service guess of Tiresias).
    remaining_samples: job.remaining_samples ?? Math.max(job.samples, 1),
    restart_s: LIVE_RESTART_S,
    // The typed policy keeps the configuration of a job it must not move: one whose launch is
    // under way, or that may not be stopped (its spec, or no checkpoint to resume from).
    restarting:
      holding && (job.state !== 'running' || job.spec.preemptible === false || stopProtection(job) !== undefined),
  };
}

/** The typed snapshot: `nodes` typed (control/typed-nodes.ts), jobs and allocations as in `base`. */
export function typedSnapshot(
  base: Pick<ClusterSnapshot, 'now_s' | 'allocations'>,
  nodes: readonly NodeInfo[],
  jobs: readonly TypedJob[],
): TypedSnapshot {
  return { now_s: base.now_s, nodes, jobs, allocations: base.allocations };
}
