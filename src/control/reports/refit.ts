/**
 * One refit of a job's throughput model, as the report path runs it, in one direction: read (the
 * job's key's profile, the cluster network model), compute (ProfileBook.plan, model/job-fit.ts
 * `fitJob`), then write everything the refit changes in one store transaction (Store.saveRefit).
 */
import { fitPerfParams } from '../../goodput/fit.js';
import type { NetworkParams } from '../../goodput/network-model.js';
import type { ProfilePoint } from '../../goodput/types.js';
import { fitJob } from '../../model/job-fit.js';
import type { Store } from '../../store/store.js';
import type { JobRecord, StoredKeyProfile } from '../../store/types.js';
import type { NetworkBook } from './network-book.js';
import { fromOthers, type ProfileBook, type ProfilePlan } from './profile-book.js';

/** What a refit reads and writes through. */
export interface RefitDeps {
  store: Store;
  log: (line: string) => void;
  /** Profiles of profile keys: the refit judges the job's points against its key's profile and merges them in. */
  profiles?: ProfileBook;
  /**
   * With `profiles`, the policy's network model (Policy.uses_network_model): a job with no
   * profile of other jobs, measured on one node only, gets its cross-node terms from it.
   */
  network?: NetworkBook;
}

/**
 * Refits `job` from its own points `own` (one per configuration), and its key's profile unless
 * discarded, by the rule the simulator uses (model/job-fit.ts `fitJob`); sets `job.perf` and
 * `job.correction` once stored. `ended_successfully`: the job's last refit after it succeeded
 * (ProfileBook.plan). Returns the key's profile as saved, if the refit merged into it. Only a
 * policy that keeps profiles corrects the fit by its measurements (snapshot.ts `modelOf`); the
 * others (pollux) use the plain fit, as in the simulator. Throws when the store fails (nothing
 * written).
 */
export async function refitJob(
  deps: RefitDeps,
  job: JobRecord,
  own: readonly ProfilePoint[],
  ended_successfully = false,
): Promise<StoredKeyProfile | undefined> {
  if (own.length === 0) return undefined;
  const plan: ProfilePlan =
    (await deps.profiles?.plan(job, own, ended_successfully).catch((error: unknown) => {
      deps.log(`profile of job ${job.id} not updated: ${(error as Error).message}`);
      return undefined;
    })) ?? {};
  const merge = plan.merge;
  const profile = merge && !merge.replaced && fromOthers(merge.merged, job.id) ? merge.merged : undefined;
  const net = profile ? undefined : await networkParams(deps, job, own);
  const fit = fitJob({
    own,
    ...(profile ? { profile } : {}),
    ...(net ? { network: () => net } : {}),
    ...(job.model_parameters !== null ? { model_parameters: job.model_parameters } : {}),
    corrected: deps.profiles !== undefined,
    fit: fitPerfParams,
  })!;
  const stored = await deps.store.saveRefit({
    job_id: job.id,
    perf: fit.perf,
    correction: fit.correction,
    ...(plan.discard ? { discard: plan.discard } : {}),
    // The merged profile's points are the ones the job was fitted on (its own, and the profile's
    // at configurations it has not measured): its fit is the profile's, fitted once. A
    // prediction by the network model is not a fit of them.
    ...(merge
      ? {
          profile: {
            update: merge.update,
            perf: net ? fitPerfParams(merge.merged.points) : fit.perf,
            ...(merge.replaced ? { replaced: merge.replaced } : {}),
          },
        }
      : {}),
  });
  job.perf = fit.perf;
  job.correction = fit.correction;
  deps.profiles?.saved(job, plan, stored);
  return stored;
}

/**
 * With the network model, the cluster's network parameters for a job with no profile of other
 * jobs, measured on one node only. Undefined without the network model, when it has multi-node
 * points (its own fit is used), when no profile of its GPU type has any, or when the store fails.
 */
async function networkParams(
  deps: RefitDeps,
  job: JobRecord,
  points: readonly ProfilePoint[],
): Promise<NetworkParams | undefined> {
  const network = deps.network;
  // A multi-node job keeps its own fit anyway: skip the store read.
  if (!network || points.some((p) => p.num_nodes > 1)) return undefined;
  return network.paramsFor(job).catch((error: unknown) => {
    deps.log(`network model for job ${job.id} not read, its own fit is used: ${(error as Error).message}`);
    return undefined;
  });
}
