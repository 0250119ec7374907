/**
 * What the control plane knows of a job per GPU type (core/cluster.ts JobTypes), the same facts
 * the mixed-type simulator gives, so that one policy decides in both. A job's model on a type is
 * the control plane's one model (control/loop/snapshot.ts `modelOf`, model/job-fit.ts): on the type it
 * runs (or last ran) on, its own fit with its key's profile there; on another type, its key's
 * profile there. `typedInputs` reads what that needs from the store; the rest is pure.
 */
import type { BackendNode } from '../../backends/backend.js';
import type { JobTypes } from '../../core/cluster.js';
import type { GoodputModel } from '../../goodput/types.js';
import { buildJobTypes } from '../../model/job-types.js';
import type { Store } from '../../store/store.js';
import type { JobRecord, StoredKeyProfile } from '../../store/types.js';
import type { Turns } from '../../util/turns.js';
import { fromOthers, gpuTypeOf, type ProfileBook } from '../reports/profile-book.js';
import { fitType, lastAttemptType } from '../reports/report-ingest.js';
import { limitsOf, modelOf, stopProtection } from './snapshot.js';

/** Seconds a restart is assumed to cost a live job (a stop, a checkpoint load, a relaunch). */
export const LIVE_RESTART_S = 30;

/** What the builder needs of one job besides its record. */
export interface TypedJobInput {
  /** The record, its allocation in the policy's nodes (control/loop/typed-nodes.ts `toGroups`). */
  job: JobRecord;
  /** The type its own measurements come from (where it runs or last ran); undefined before it has any. */
  own_type: string | undefined;
  /** Its key's profile per type (with a fit); absent types have none. */
  profiles: ReadonlyMap<string, StoredKeyProfile>;
  /** Whether its model on its own type includes its key's profile there (ProfileBook.forRound gave it one). */
  own_profile: StoredKeyProfile | undefined;
}

export { UNKNOWN_TYPE_DISCOUNT } from '../../model/job-types.js';

/**
 * A job's facts per type (model/job-types.ts `buildJobTypes`): its own fit with its key's profile
 * on the type its fit is of, its key's profile on the others; one-GPU rates from those models.
 */
export function jobTypes(input: TypedJobInput, types: readonly string[]): JobTypes {
  const { job, own_type, profiles } = input;
  const models = new Map<string, GoodputModel>();
  const max_profiled: Record<string, number> = {};
  for (const t of types) {
    const profile = profiles.get(t);
    const model =
      t === own_type
        ? modelOf(job, input.own_profile)
        : profile
          ? modelOf({ ...job, perf: null, correction: null }, profile)
          : undefined;
    if (model) models.set(t, model);
    const fromProfile = profile?.max_measured_replicas ?? 0;
    max_profiled[t] = t === own_type ? Math.max(job.max_profiled_replicas, fromProfile) : fromProfile;
  }
  const holding = job.allocation.length > 0 && ['starting', 'running', 'rescaling'].includes(job.state);
  return buildJobTypes({
    types,
    own_type,
    model: (t) => models.get(t),
    limits: (t) => limitsOf(job, t === own_type ? input.own_profile : profiles.get(t)),
    max_profiled,
    // Unknown length: as much again as done so far (the attained-service guess of Tiresias).
    remaining_samples: job.remaining_samples ?? Math.max(job.samples, 1),
    restart_s: LIVE_RESTART_S,
    // The typed policy keeps the configuration of a job it must not move: one whose launch is
    // under way, or that may not be stopped (its spec, or no checkpoint to resume from).
    restarting:
      holding && (job.state !== 'running' || job.spec.preemptible === false || stopProtection(job) !== undefined),
  });
}

/** What `typedInputs` reads with. */
export interface TypedReads {
  store: Store;
  machines: readonly BackendNode[];
  /** The cluster's GPU types (the policy's nodes'). */
  types: readonly string[];
  /** Absent when the policy keeps no profiles. */
  profiles: ProfileBook | undefined;
  /** The profile each job's model starts from on the type it holds (ProfileBook.forRound). */
  own_profiles: ReadonlyMap<string, StoredKeyProfile>;
}

/**
 * Each job's `jobTypes` input: the type its own fit is of (where it measured, report-ingest.ts
 * `fitType`, else the type it holds) and its key's profile per type. `stored`: the jobs as
 * stored (allocations on machines); `grouped`: the same with allocations on the policy's nodes.
 * On a cluster of one type the answers need no reads: the fit and the profile are of that type.
 */
export async function typedInputs(
  r: TypedReads,
  stored: readonly JobRecord[],
  grouped: readonly JobRecord[],
  turns?: Turns,
): Promise<TypedJobInput[]> {
  const only = r.types.length === 1 ? r.types[0]! : undefined;
  const out: TypedJobInput[] = [];
  for (let i = 0; i < stored.length; i++) {
    const job = stored[i]!;
    const placed = job.allocation.length > 0 ? gpuTypeOf(job, r.machines) : undefined;
    if (only !== undefined) {
      const own = r.own_profiles.get(job.id);
      const own_type = job.perf !== null || placed !== undefined ? only : undefined;
      out.push({ job: grouped[i]!, own_type, profiles: own ? new Map([[only, own]]) : new Map(), own_profile: own });
      continue;
    }
    await turns?.pause();
    const current = placed ?? (await lastAttemptType(r.store, job));
    const fit = job.perf !== null ? await fitType(r.store, job, current) : undefined;
    // Its own model is of the type its fit is of (where it measured), else the type it holds.
    const own_type = job.perf !== null ? (fit ?? gpuTypeOf(job, r.machines)) : placed;
    const profiles = r.profiles ? await r.profiles.byType(job, r.types) : new Map<string, StoredKeyProfile>();
    // The round's profile of a job is that of the type it holds; its fit of another type takes that type's.
    const elsewhere = own_type !== undefined && own_type !== gpuTypeOf(job, r.machines);
    const other = elsewhere ? profiles.get(own_type) : undefined;
    const own_profile = !elsewhere
      ? r.own_profiles.get(job.id)
      : other && fromOthers(other, job.id)
        ? other
        : undefined;
    out.push({ job: grouped[i]!, own_type, profiles, own_profile });
  }
  return out;
}
