/**
 * A job's throughput model from what it and its key's profile measured: which points it is
 * fitted on, when the cluster network model supplies its cross-node terms, how the fit is
 * corrected where it was measured, and the goodput model the policy and the batch choice read.
 * The simulator and the control plane both call these; they differ only in when they refit and
 * where the points are kept. Pure.
 */
import { gradAt, inConfigOrder, modelPoints, type KeyProfile } from '../goodput/key-profile.js';
import { predictPerfParams, type NetworkParams } from '../goodput/network-model.js';
import { stepCorrection } from '../goodput/step-correction.js';
import type {
  BatchLimits,
  GoodputModel,
  GradParams,
  PerfParams,
  ProfilePoint,
  StepCorrection,
} from '../goodput/types.js';

/** Fits throughput parameters on points (goodput/fit.ts `fitPerfParams` in both drivers). */
export type PerfFitter = (points: readonly ProfilePoint[]) => PerfParams;

/** What a job's refit is made from. */
export interface JobFitInput {
  /** The job's own points, one per configuration. */
  own: readonly ProfilePoint[];
  /** Its key's profile while it holds other jobs' measurements and was not discarded. */
  profile?: KeyProfile;
  /** The profile's own fit, when `own` is empty (the job starts from the profile alone). */
  profile_perf?: PerfParams;
  /**
   * The cluster network model, for a job with no profile whose points are all on one node
   * (undefined: no network model, or none fitted yet).
   */
  network?: () => NetworkParams | undefined;
  /** The job's model's parameter count, when it reported one (network-model.ts). */
  model_parameters?: number;
  /** Whether the fit is corrected by its measurements (the policy keeps profiles). */
  corrected: boolean;
  fit: PerfFitter;
  /**
   * The fit-and-correct rule to use, when not {@link fitAndCorrect} over `fit` itself: one that
   * returns what it would (the simulator's memo by points, sim/fit-memo.ts).
   */
  fitAndCorrect?: (points: readonly ProfilePoint[], corrected: boolean) => JobFit;
}

/** A job's fitted throughput model and its correction where measured (null: uncorrected). */
export interface JobFit {
  perf: PerfParams;
  correction: StepCorrection | null;
}

/**
 * Which order a fit takes its points in: `config`, configuration order (goodput/key-profile.ts
 * `inConfigOrder`), every driver's; `measured`, as given, only for a mixed-type simulator's job
 * without shared profiles (sim/hetero/hetero-job.ts: the Sia artifact's baselines sia and pollux),
 * which reproduces the artifact's per-job fit over its points in the order measured.
 */
export type FitOrder = 'config' | 'measured';

/**
 * The one fit and correction rule: `fit` over `points` in configuration order (a fit's last digits
 * depend on the order of its points, so drivers that keep the same points in another order still
 * agree; `order` says otherwise for the artifact's baselines only), corrected (step-correction.ts)
 * by the same points when `corrected`. Every driver's fit of a job or a key on a type is this over
 * the points it keeps (fitJob's: model points of the job and its profile).
 */
export function fitAndCorrect(
  input: readonly ProfilePoint[],
  fit: PerfFitter,
  corrected: boolean,
  order: FitOrder = 'config',
): JobFit {
  const points = order === 'config' ? inConfigOrder([...input]) : input;
  const perf = fit(points);
  return { perf, correction: corrected ? stepCorrection(perf, points) : null };
}

/**
 * The job's fit: on its own points plus the profile's at configurations it has not measured
 * (key-profile.ts `modelPoints`); without a profile and with all its points on one node, by the
 * network model's prediction of its cross-node terms; with no own point, the profile's fit.
 * Corrected (step-correction.ts) by the points it was fitted on. Undefined with no point at all.
 */
export function fitJob(input: JobFitInput): JobFit | undefined {
  const { own, profile } = input;
  const points = modelPoints(own, profile);
  if (points.length === 0) return undefined;
  let perf: PerfParams | undefined;
  if (profile && own.length === 0) perf = input.profile_perf;
  else if (!profile && input.network && own.every((p) => p.num_nodes === 1)) {
    const net = input.network();
    if (net) perf = predictPerfParams(own, net, input.model_parameters);
  }
  if (!perf)
    return input.fitAndCorrect
      ? input.fitAndCorrect(points, input.corrected)
      : fitAndCorrect(points, input.fit, input.corrected);
  return { perf, correction: input.corrected ? stepCorrection(perf, points) : null };
}

/** What a job's goodput model is assembled from. */
export interface JobModelInput {
  /** The job's own fit, once it has one. */
  fit?: JobFit | null;
  /** Its latest own gradient statistics. */
  grad?: GradParams | null;
  /** Its key's profile in use (as for fitJob) and that profile's fit. */
  profile?: KeyProfile;
  profile_perf?: PerfParams;
  corrected: boolean;
  limits: BatchLimits;
}

/**
 * The goodput model the policy and the batch choice read: the job's fit, else (not measured
 * yet) its profile's, corrected where measured; its own gradient statistics, else those of its
 * profile at the start of training. Undefined until both a fit and gradient statistics exist.
 */
export function jobModel(input: JobModelInput): GoodputModel | undefined {
  const { profile } = input;
  const own = input.fit ?? undefined;
  const perf = own?.perf ?? input.profile_perf;
  const grad = input.grad ?? (profile ? gradAt(profile, 0) : undefined);
  if (!perf || !grad) return undefined;
  const model: GoodputModel = { perf, grad, limits: input.limits };
  const correction = own ? own.correction : input.corrected && profile ? stepCorrection(perf, profile.points) : null;
  if (correction) model.correction = correction;
  return model;
}
