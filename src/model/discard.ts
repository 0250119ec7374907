/**
 * When a job's own measurements discard its key's profile: the job is then not the model the
 * profile describes (other data, another model size, another GPU), so its model is fitted on its
 * own points only and it adds nothing to the profile. Pure.
 */
import { MEASURED_ERROR_TOLERANCE, measuredError, shapeKey, type KeyProfile } from '../goodput/key-profile.js';
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
export function judgeAgainstProfile(perf: PerfParams, profile: KeyProfile, own: readonly ProfilePoint[], contributed: ReadonlySet<string> = new Set(), tolerance = MEASURED_ERROR_TOLERANCE): ProfileJudgement {
  const shapes = new Set(profile.points.map(shapeKey).filter((s) => !contributed.has(s)));
  const comparable = own.filter((p) => shapes.has(shapeKey(p)));
  if (comparable.length === 0) return { verdict: 'unjudged', error: 0, comparable };
  const error = measuredError(perf, profile, comparable);
  return { verdict: error > tolerance ? 'discard' : 'keep', error, comparable };
}
