/**
 * The control plane's side of profile keys (docs/control-plane.md "Profiles"): which profile a
 * job starts from, when its own measurements discard it, and what it adds to it. The pure rules
 * are model/ (discard.ts, progress.ts, profile-keeper.ts: the one keeper, the simulators' too);
 * the profiles live in the store, which merges by the same keeper.
 */
import type { BackendNode } from '../../backends/backend.js';
import { deviceType } from '../../backends/device-type.js';
import { profileKeyOf } from '../../core/profile-key.js';
import { scopedKey } from '../../core/profile-scope.js';
import {
  emptyProfile,
  MEASURED_ERROR_TOLERANCE,
  measuredError,
  shapeKey,
  type GradSample,
  type KeyProfile,
} from '../../goodput/key-profile.js';
import { optimStepTime_s } from '../../goodput/throughput.js';
import type { PerfParams, ProfilePoint } from '../../goodput/types.js';
import { contentionExplains, judgeAgainstProfile, type HostLoad } from '../../model/discard.js';
import { keepReport } from '../../model/profile-keeper.js';
import { progressOfWork } from '../../model/progress.js';
import { isTerminal } from '../../store/lifecycle.js';
import type { KeyProfileUpdate, Store } from '../../store/store.js';
import type { JobRecord, StoredKeyProfile } from '../../store/types.js';
import type { Turns } from '../../util/turns.js';

export { deviceType } from '../../backends/device-type.js';

/**
 * The GPU type a job runs on: that of the first device of its binding, else (not placed) that of
 * the first device of the first usable node, else `cpu`.
 */
export function gpuTypeOf(job: Pick<JobRecord, 'allocation' | 'devices'>, nodes: readonly BackendNode[]): string {
  const node = job.allocation.length > 0 ? nodes[job.allocation[0]!] : undefined;
  if (node) return deviceType(node.devices.find((d) => d.index === job.devices[0]) ?? node.devices[0]);
  return deviceType((nodes.find((n) => n.usable > 0) ?? nodes[0])?.devices[0]);
}

/**
 * Fraction of its training a job has done, from its newest report (samples done and left), as
 * the progress bucket of its gradient sample (model/progress.ts); undefined when the job has not
 * said how much it has left.
 */
export function progressOf(job: Pick<JobRecord, 'samples' | 'remaining_samples'>): number | undefined {
  if (job.remaining_samples === null) return undefined;
  return progressOfWork(job.samples, job.remaining_samples);
}

/** Whether the profile holds what jobs other than `job_id` measured (a job's own profile teaches it nothing new). */
export function fromOthers(profile: StoredKeyProfile, job_id: string): boolean {
  return profile.points.length > 0 && profile.job_ids.some((id) => id !== job_id);
}

const profileId = (gpu_type: string, key: string): string => `${gpu_type}\n${key}`;

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** The job's measurement that disagrees most with `perf`, in words. */
function disagreement(perf: PerfParams, profile: KeyProfile, own: readonly ProfilePoint[]): string {
  let worst = own[0]!;
  let worstError = -1;
  for (const p of own) {
    const error = measuredError(perf, profile, [p]);
    if (error > worstError) [worst, worstError] = [p, error];
  }
  const predicted_s = optimStepTime_s(perf, worst.num_nodes, worst.num_replicas, worst.local_bsz);
  return (
    `an optimizer step at ${plural(worst.num_replicas, 'replica')} and local batch ` +
    `${worst.local_bsz} took ${worst.optim_step_time_s.toPrecision(3)} s where the profile ` +
    `predicts ${predicted_s.toPrecision(3)} s`
  );
}

/** What one refit does with the job's key's profile (ProfileBook.plan); empty: nothing. */
export interface ProfilePlan {
  /** The job's measurements were judged against the profile (once per server start). */
  judged?: boolean;
  /** The job stops using the profile: its measurements disagree with it. */
  discard?: { reason: string; data: Record<string, unknown> };
  /** The job's measurements go into the profile; `merged` is the profile as the store will hold it. */
  merge?: {
    update: KeyProfileUpdate;
    merged: StoredKeyProfile;
    replaced?: { reason: string; data: Record<string, unknown> };
  };
}

/**
 * The job's measurements, gradient sample and model parameter count for its key's profile, and
 * the profile `before` with them merged as the store merges them (Store.mergeKeyProfile), so the
 * refit fits the merged points before anything is written.
 */
function mergePlan(
  job: JobRecord,
  key: string,
  gpu_type: string,
  before: StoredKeyProfile | undefined,
  own: readonly ProfilePoint[],
): NonNullable<ProfilePlan['merge']> {
  const progress = progressOf(job);
  const grad: GradSample[] = progress !== undefined && job.grad ? [{ progress, ...job.grad }] : [];
  const update: KeyProfileUpdate = {
    key,
    gpu_type,
    job_id: job.id,
    points: own,
    grad,
    limits: job.limits,
    model_parameters: job.model_parameters ?? undefined,
  };
  const base: StoredKeyProfile = before ?? {
    ...emptyProfile(key, gpu_type),
    perf: null,
    limits: null,
    job_ids: [],
    updated_at_ms: 0,
  };
  const new_job = !base.job_ids.includes(job.id);
  const merged: StoredKeyProfile = {
    ...keepReport(base, { points: own, grad, new_job, model_parameters: update.model_parameters }).profile,
    limits: job.limits ?? base.limits,
    job_ids: new_job ? [...base.job_ids, job.id] : base.job_ids,
    updated_at_ms: base.updated_at_ms,
  };
  return { update, merged };
}

/**
 * Profiles for the scheduler and the report path. `forRound` gives each job the profile its
 * model starts from; `plan` (a job's refit) judges the job's measurements against its profile
 * and merges them in.
 */
export class ProfileBook {
  private readonly judged = new Set<string>();
  /** Per job, the shapes of the points it merged into its key's profile since the server started (not judged against: model/discard.ts). */
  private readonly contributed = new Map<string, Set<string>>();
  /** The newest profile read or written per (GPU type, key): one entry per key, so bounded. */
  private readonly newest = new Map<string, StoredKeyProfile>();

  /**
   * `shared`: one profile per key for all users (`goodput up --shared-profiles`); by default each
   * user's jobs read and feed only that user's profile of the key (core/profile-scope.ts), so
   * that one user's reports cannot change how another user's jobs start.
   */
  constructor(
    private readonly store: Store,
    private readonly nodes: () => readonly BackendNode[],
    private readonly log: (line: string) => void,
    private readonly shared = false,
  ) {}

  /** The stored key of the profile the job reads and feeds: its user's, or the shared one. */
  private storedKey(job: Pick<JobRecord, 'spec' | 'user'>): string {
    return scopedKey(profileKeyOf(job.spec), this.shared ? '' : job.user);
  }

  /**
   * The profile each job's model uses this round (jobs without one, or whose profile was
   * discarded, are absent); records `profile-used` the first time a job's model includes what
   * other jobs of its key measured.
   */
  async forRound(jobs: readonly JobRecord[], turns?: Turns): Promise<Map<string, StoredKeyProfile>> {
    // A job that left the active set is never judged again: forget it, so the set stays bounded.
    const active = new Set(jobs.map((j) => j.id));
    for (const id of this.judged) if (!active.has(id)) this.judged.delete(id);
    for (const id of this.contributed.keys()) if (!active.has(id)) this.contributed.delete(id);
    const out = await this.read(jobs, true, turns);
    for (const job of jobs) {
      await turns?.pause();
      const profile = out.get(job.id);
      if (!profile || job.profile_use !== null) continue;
      const key = profileKeyOf(job.spec);
      const gpu_type = gpuTypeOf(job, this.nodes());
      const sizes = [...new Set(profile.points.map((p) => p.num_replicas))].sort((a, b) => a - b);
      const others = profile.job_ids.filter((j) => j !== job.id).length;
      const reason =
        `model from the profile of '${key}' on ${gpu_type}: ${plural(others, 'earlier job')} ` +
        `measured it at ${sizes.join(', ')} replica(s), so it may start at its efficient size ` +
        `instead of 1; its own reports refine it`;
      await this.store.setProfileUse(job.id, 'used', 'scheduler', reason, { key, gpu_type, jobs: others, sizes });
    }
    return out;
  }

  /**
   * The profile each job's model uses by the rule of `forRound`, read from the store and changing
   * nothing: what the API and the dashboard show a job's speedup with, so that they agree with
   * the scheduler. A job that has ended gets one only if its model used it (`profile_use`
   * `used`): one that ended before the scheduler sized it by the profile is not predicted by it.
   */
  lookup(jobs: readonly JobRecord[]): Promise<Map<string, StoredKeyProfile>> {
    return this.read(
      jobs.filter((j) => !isTerminal(j.state) || j.profile_use === 'used'),
      false,
    );
  }

  /** One store read per (GPU type, key); `remember`: keep what was read as the newest (the round's path only). */
  private async read(
    jobs: readonly JobRecord[],
    remember: boolean,
    turns?: Turns,
  ): Promise<Map<string, StoredKeyProfile>> {
    const byKey = new Map<string, StoredKeyProfile | undefined>();
    const out = new Map<string, StoredKeyProfile>();
    for (const job of jobs) {
      await turns?.pause();
      if (job.profile_use === 'discarded') continue;
      const key = this.storedKey(job);
      const gpu_type = gpuTypeOf(job, this.nodes());
      const id = profileId(gpu_type, key);
      if (!byKey.has(id)) {
        const stored = await this.store.getKeyProfile(key, gpu_type);
        byKey.set(id, remember ? this.remember(id, stored) : stored);
      }
      const profile = byKey.get(id);
      if (profile?.perf && fromOthers(profile, job.id)) out.set(job.id, profile);
    }
    return out;
  }

  /**
   * What a refit of the job from its own points `own` does with its key's profile (reads the
   * store, writes nothing; the refit saves it with Store.saveRefit, then calls `saved`):
   * - judges `own` against the profile once per server start, at the first refit where the job
   *   measured a placement shape the profile knows: a profile whose measurements, corrected by its
   *   fit for the local batch, are off from them by more than MEASURED_ERROR_TOLERANCE
   *   (goodput/key-profile.ts `measuredError`) is discarded for this job (`discard`: event
   *   `profile-discarded`), and the job adds nothing to it. Shapes whose points the job merged
   *   itself are not compared (model/discard.ts); after a restart, a job already in the profile
   *   may have merged any of its shapes, so none of its own are;
   * - else merges `own`, the job's gradient sample and its model's parameter count in (`merge`:
   *   the profile as the store will hold it, model/profile-keeper.ts `keepReport`);
   * - with `ended_successfully`, a job that discarded its key's profile replaces one that holds
   *   only one other job's measurements (`merge.replaced`: event `profile-replaced`). One job's
   *   measurements can be off (its first steps on a loaded machine), and kept, every later job of
   *   the key would discard them and start from nothing. A profile two jobs agreed on stays: a
   *   stale one is removed with `goodput profiles rm`.
   */
  async plan(job: JobRecord, own: readonly ProfilePoint[], ended_successfully = false): Promise<ProfilePlan> {
    if (own.length === 0) return {};
    const key = profileKeyOf(job.spec);
    const gpu_type = gpuTypeOf(job, this.nodes());
    const stored_key = this.storedKey(job);
    const before = await this.store.getKeyProfile(stored_key, gpu_type);
    let discard: ProfilePlan['discard'];
    let judged = false;
    if (job.profile_use !== 'discarded' && before?.perf && !this.judged.has(job.id) && fromOthers(before, job.id)) {
      // Before a restart the job may have merged points this server did not see: all its shapes may be its own.
      const contributed =
        this.contributed.get(job.id) ?? (before.job_ids.includes(job.id) ? new Set(own.map(shapeKey)) : undefined);
      const { verdict, error, comparable } = judgeAgainstProfile(before.perf, before, own, contributed);
      judged = verdict !== 'unjudged';
      const load = verdict === 'discard' ? await this.hostLoad(job) : undefined;
      if (load && contentionExplains(before.perf, comparable, load)) {
        // Slower on a shared, busy host: contention, not another model. Judged again at a later
        // refit, and its slowed points stay out of the profile meanwhile.
        this.log(
          `job ${job.id}: profile of '${key}' on ${gpu_type} kept for now: ` +
            `${disagreement(before.perf, before, comparable)} while ${load.other_processes} process` +
            `${load.other_processes === 1 ? '' : 'es'} of other jobs share its host` +
            `${load.cores === null ? '' : ` of ${plural(load.cores, 'core')}`} (contention, not ` +
            `another model); judged again at a later measurement`,
        );
        return {};
      }
      if (verdict === 'discard') {
        const reason =
          `profile of '${key}' on ${gpu_type} discarded: ` +
          `${disagreement(before.perf, before, comparable)} (off by ${Math.round(error * 100)}% of ` +
          `the measurement, tolerance ${Math.round(MEASURED_ERROR_TOLERANCE * 100)}%), so this job ` +
          `is not the model the profile describes; its model now uses its own measurements only and ` +
          `it adds nothing to the profile`;
        discard = { reason, data: { key, gpu_type, error } };
      }
    }
    if (job.profile_use !== 'discarded' && !discard)
      return { judged, merge: mergePlan(job, stored_key, gpu_type, before, own) };
    const only = before?.job_ids.length === 1 ? before.job_ids[0] : undefined;
    if (!ended_successfully || only === undefined || only === job.id)
      return { judged, ...(discard ? { discard } : {}) };
    const reason =
      `profile of '${key}' on ${gpu_type} replaced by this job's measurements: it held only ` +
      `those of job ${only}, which this job's disagreed with; later jobs of the key start from ` +
      `this job's`;
    const replaced = { reason, data: { key, gpu_type, replaced_job: only } };
    return {
      judged,
      ...(discard ? { discard } : {}),
      merge: { ...mergePlan(job, stored_key, gpu_type, undefined, own), replaced },
    };
  }

  /**
   * Who else trains on the job's hosts now (model/discard.ts `HostLoad`): replicas of other
   * running jobs placed on the nodes of its replicas, and its host's cores from its newest report.
   */
  private async hostLoad(job: JobRecord): Promise<HostLoad> {
    const nodes = new Set(job.allocation);
    let other_processes = 0;
    for (const j of await this.store.listJobs({ states: ['running'] })) {
      if (j.id !== job.id) other_processes += j.allocation.filter((n) => nodes.has(n)).length;
    }
    const cores = (await this.store.listReports(job.id, 1))[0]?.host?.cpu_count ?? null;
    return { own_processes: job.allocation.length, other_processes, cores };
  }

  /** After the store saved the refit `plan` planned: the job, the log and the report path see its outcome (`stored`: the saved profile). */
  saved(job: JobRecord, plan: ProfilePlan, stored: StoredKeyProfile | undefined): void {
    if (plan.judged) this.judged.add(job.id);
    if (plan.merge) {
      const shapes = this.contributed.get(job.id) ?? new Set<string>();
      for (const p of plan.merge.update.points) shapes.add(shapeKey(p));
      this.contributed.set(job.id, shapes);
    }
    if (plan.discard) {
      job.profile_use = 'discarded';
      this.log(`job ${job.id}: ${plan.discard.reason}`);
    }
    if (plan.merge?.replaced) this.log(`job ${job.id}: ${plan.merge.replaced.reason}`);
    if (stored) this.remember(profileId(stored.gpu_type, stored.key), stored);
  }

  /**
   * The profile `forRound` would give the job, as last read or written (no store access): for
   * the report path, whose batch choice then uses the same corrected model as the policy.
   */
  latestFor(job: JobRecord): StoredKeyProfile | undefined {
    if (job.profile_use === 'discarded') return undefined;
    const profile = this.newest.get(profileId(gpuTypeOf(job, this.nodes()), this.storedKey(job)));
    return profile?.perf && fromOthers(profile, job.id) ? profile : undefined;
  }

  /**
   * The job's key's profile on each of `types` that has a fit, whoever measured it (the job
   * itself included: what it measured on a type it has left is its model there). For a typed
   * policy (control/loop/typed-snapshot.ts). A job that discarded its profile gets none.
   */
  async byType(job: JobRecord, types: readonly string[]): Promise<Map<string, StoredKeyProfile>> {
    const out = new Map<string, StoredKeyProfile>();
    if (job.profile_use === 'discarded') return out;
    for (const t of types) {
      const stored = await this.store.getKeyProfile(this.storedKey(job), t);
      if (stored?.perf) out.set(t, stored);
    }
    return out;
  }

  private remember<T extends StoredKeyProfile | undefined>(id: string, profile: T): T {
    if (profile) this.newest.set(id, profile);
    else this.newest.delete(id);
    return profile;
  }
}
