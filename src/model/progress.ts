/**
 * How a job's training progress is bucketed for its key's profile: gradient statistics are kept
 * at most once per bucket, so a profile holds a bounded number of samples however many jobs
 * report to it. Pure.
 */

/** Buckets per unit of progress: a profile keeps at most GRAD_BUCKETS + 1 gradient samples. */
export const GRAD_BUCKETS = 100;

/** Width of one progress bucket (fraction of training done). */
export const PROGRESS_STEP = 1 / GRAD_BUCKETS;

/**
 * The bucket of a fraction of training done: clamped to [0, 1] and rounded to the nearest
 * multiple of PROGRESS_STEP (an exact decimal such as 0.37, so that equal buckets compare equal).
 */
export function progressBucket(fraction: number): number {
  const clamped = Math.min(Math.max(fraction, 0), 1);
  return Math.round(clamped * GRAD_BUCKETS) / GRAD_BUCKETS;
}

/**
 * The bucket of a job that has done `done` of `done + left` (samples, iterations: any unit);
 * 0 when it has nothing to do.
 */
export function progressOfWork(done: number, left: number): number {
  const all = done + left;
  return all > 0 ? progressBucket(done / all) : 0;
}
