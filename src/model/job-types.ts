/**
 * The one builder of a job's facts per GPU type (core/cluster.ts JobTypes), called by the
 * mixed-type simulator and the control plane with what each knows, beside the one builder of
 * the policy job (policy-job.ts) that carries them. Pure.
 */
import type { JobTypes, PolicyJob } from '../core/cluster.js';
import { throughput } from '../goodput/throughput.js';
import type { BatchLimits, GoodputModel } from '../goodput/types.js';

/**
 * One-GPU rate of a type where neither a job nor its key has measured anything, relative to the
 * mean of the types where they have. Below 1, so that no job moves to a type for lack of evidence
 * (the policy rounds its costs to 0.01: 0.95 is still visible), while it still runs there when
 * that is all that is free.
 */
export const UNKNOWN_TYPE_DISCOUNT = 0.95;

/** What a driver knows of one job per type. */
export interface JobTypeFacts {
  /** The cluster's types. */
  types: readonly string[];
  /** The type its own measurements come from (where it runs or last ran); undefined before any. */
  own_type: string | undefined;
  /** Its model on a type (model/job-fit.ts `jobModel` over what it and its key measured there). */
  model(type: string): GoodputModel | undefined;
  /** Its model transferred to a type nobody of its key measured, where the driver keeps transfers. */
  transferred?(type: string): GoodputModel | undefined;
  limits(type: string): BatchLimits;
  /** Largest replica count measured on each type, by the job or its key. */
  max_profiled: Readonly<Record<string, number>>;
  /**
   * One-GPU samples/s per type known before any measurement (the mixed-type simulator's: Sia's
   * bootstrap profile of the application, from its traces). Absent: from the models
   * (`derivedOneGpuRates`).
   */
  one_gpu_samples_per_s?: Readonly<Record<string, number>>;
  remaining_samples: number;
  restart_s: number;
  restarting: boolean;
}

/** Samples/s of `model` on one GPU at its initial batch (Sia's one-GPU bootstrap figure). */
function oneGpuRate(model: GoodputModel): number {
  const bsz = Math.max(1, Math.min(model.limits.init_batch_size, model.limits.max_local_bsz));
  return throughput(model.perf, 1, 1, bsz, 0);
}

/**
 * One-GPU rates from the models: a type where neither the job nor its key has measured anything
 * gets the mean rate of the types where they have, times UNKNOWN_TYPE_DISCOUNT. With nothing
 * measured anywhere, every type gets 1, except that a placed job's other types get the discount.
 */
export function derivedOneGpuRates(f: Pick<JobTypeFacts, 'types' | 'own_type' | 'model'>): Record<string, number> {
  const rates = new Map<string, number>();
  for (const t of f.types) {
    const m = f.model(t);
    rates.set(t, m ? oneGpuRate(m) : NaN);
  }
  const known = [...rates.values()].filter((r) => Number.isFinite(r) && r > 0);
  const mean = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : 1;
  const one: Record<string, number> = {};
  for (const t of f.types) {
    const rate = rates.get(t)!;
    // Nothing known anywhere: the type it holds counts as known.
    const unknown = known.length > 0 || (f.own_type !== undefined && t !== f.own_type) ? UNKNOWN_TYPE_DISCOUNT : 1;
    one[t] = Number.isFinite(rate) && rate > 0 ? rate : mean * unknown;
  }
  return one;
}

/**
 * The job's JobTypes: its facts, with the one-GPU rates given or derived from its models (then
 * on first read: deriving them fits the models, which some policies never read).
 */
export function buildJobTypes(f: JobTypeFacts): JobTypes {
  const out: JobTypes = {
    max_profiled: f.max_profiled,
    model: (t) => f.model(t),
    ...(f.transferred ? { transferred: (t: string) => f.transferred!(t) } : {}),
    limits: (t) => f.limits(t),
    one_gpu_samples_per_s: f.one_gpu_samples_per_s ?? {},
    remaining_samples: f.remaining_samples,
    restart_s: f.restart_s,
    restarting: f.restarting,
  };
  if (f.one_gpu_samples_per_s === undefined) {
    let rates: Record<string, number> | undefined;
    const get = () => (rates ??= derivedOneGpuRates(f));
    Object.defineProperty(out, 'one_gpu_samples_per_s', { enumerable: true, get });
  }
  return out;
}

/** What a driver of one GPU type says of a job besides its policy job. */
export interface OneTypeFacts {
  remaining_samples: number;
  restart_s: number;
  restarting: boolean;
}

/**
 * The facts of a job on a cluster of one GPU type `type`, read from its policy job: its model and
 * limits there, its measured sizes (the one-type simulator's; any snapshot of one type whose
 * driver gave none, policy/typed.ts `typedJobs`).
 */
export function oneTypeJobTypes(pj: PolicyJob, type: string, f: OneTypeFacts): JobTypes {
  return buildJobTypes({
    types: [type],
    own_type: pj.max_profiled_replicas > 0 ? type : undefined,
    model: (t) => (t === type ? pj.model : undefined),
    limits: () => pj.limits,
    max_profiled: { [type]: pj.max_profiled_replicas },
    ...f,
  });
}
