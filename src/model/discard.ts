/**
 * When a job's own measurements discard its key's profile: the job is then not the model the
 * profile describes (other data, another model size, another GPU), so its model is fitted on its
 * own points only and it adds nothing to the profile. Pure.
 */
import { MEASURED_ERROR_TOLERANCE, measuredError, shapeKey, type KeyProfile } from '../goodput/key-profile.js';
import { optimStepTime_s } from '../goodput/throughput.js';
import type { PerfParams, ProfilePoint } from '../goodput/types.js';

/**
 * The outcome of judging a job's points against its key's profile: `unjudged` while none of
 * them is at a placement shape (nodes, replicas) the profile measured; else `keep` or `discard`
 * by `error` (goodput/key-profile.ts `measuredError` over the comparable points).
 */
export interface ProfileJudgement {
  verdict: 'unjudged' | 'keep' | 'discard';
  /** Relative error of the comparable points (0 when unjudged). */
  error: number;
  /** The job's points at shapes the profile measured. */
  comparable: ProfilePoint[];
}

/**
 * Judges a job's own points `own` against `profile` (whose fit is `perf`) once, over every own
 * point at a shape the profile measured: one noisy point among several does not discard a
 * profile the job otherwise agrees with, and a job is judged once, when it first has such
 * points (the caller records that it was judged and does not ask again after `keep`).
 *
 * `contributed`: shapes (goodput/key-profile.ts `shapeKey`) whose points the job itself added to
 * the profile while it was unjudged. They are not comparable: the profile's points there are the
 * job's own earlier steps, and a job whose first steps were slower than its later ones (warm-up,
 * a loaded machine) would otherwise discard a profile for disagreeing with itself.
 */
export function judgeAgainstProfile(
  perf: PerfParams,
  profile: KeyProfile,
  own: readonly ProfilePoint[],
  contributed: ReadonlySet<string> = new Set(),
  tolerance = MEASURED_ERROR_TOLERANCE,
): ProfileJudgement {
  const shapes = new Set(profile.points.map(shapeKey).filter((s) => !contributed.has(s)));
  const comparable = own.filter((p) => shapes.has(shapeKey(p)));
  if (comparable.length === 0) return { verdict: 'unjudged', error: 0, comparable };
  const error = measuredError(perf, profile, comparable);
  return { verdict: error > tolerance ? 'discard' : 'keep', error, comparable };
}

/**
 * Who else trained on the hosts of a judged job, as plain data (control/reports/profile-book.ts gathers
 * it from the running jobs' placements and the job's newest report).
 */
export interface HostLoad {
  /** Replicas of the judged job on its hosts. */
  own_processes: number;
  /** Replicas of other running jobs on those hosts. */
  other_processes: number;
  /** Cores of the job's host (`host.cpu_count` of its newest report); null when unknown. */
  cores: number | null;
}

/**
 * Whether a `discard` verdict is explained by contention rather than by another model: every
 * comparable point is slower than the profile predicts (contention never makes a step faster),
 * and other jobs' processes share the job's host with more processes than it has cores (or
 * cores unknown). Then the verdict waits for a later measurement, as a repeated measurement on
 * a quieter host tells a different model from a busy one. Six jobs of one script on 2 cores are
 * one model, each slowed down by the others.
 */
export function contentionExplains(perf: PerfParams, comparable: readonly ProfilePoint[], load: HostLoad): boolean {
  if (load.other_processes <= 0) return false;
  if (load.cores !== null && load.own_processes + load.other_processes <= load.cores) return false;
  return (
    comparable.length > 0 &&
    comparable.every((p) => p.optim_step_time_s > optimStepTime_s(perf, p.num_nodes, p.num_replicas, p.local_bsz))
  );
}
