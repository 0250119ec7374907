/**
 * Fits of simulated jobs, memoized by the exact points fitted. A simulated job measures the
 * step times its trace gives for each configuration it runs at, so the copies of a job (and jobs
 * of one application placed alike) fit the very same points again and again: at 1,024 GPUs, 918
 * distinct point sets among 30,091 fits in a minute of simulation, the fits half its time
 * (issue #49). The fit is pure and deterministic, so a memo hit returns what the fit would: no
 * simulated result changes. The key is the points in order (a sum's rounding depends on it).
 */
import type { PerfParams, ProfilePoint } from '../goodput/types.js';
import { fitAndCorrect, type JobFit, type PerfFitter } from '../model/job-fit.js';

/** Point sets kept by the fit memo; past it the least recently used is dropped (each entry is about 0.5 KB). */
const MAX_FITS = 65_536;
/**
 * Point sets kept by the fit-and-correction memo: an entry with its key is about 8 KB at 15 points
 * (measured), so at most about 130 MB. A simulated day at 16,384 GPUs had 917 distinct sets after
 * 9.5 simulated hours.
 */
const MAX_JOB_FITS = 16_384;

/** The points' exact values in order: the shortest round-trip form of a double is exact, so equal keys are equal points. */
function pointsKey(points: readonly ProfilePoint[]): string {
  let key = '';
  for (const p of points)
    key += `${p.num_nodes},${p.num_replicas},${p.local_bsz},${p.accum_step_time_s},${p.optim_step_time_s};`;
  return key;
}

/** A memo by key: the value kept for `key`, else `compute()`'s; past `max` keys the least recently used is dropped. */
function lruMemo<T>(max: number): (key: string, compute: () => T) => T {
  const memo = new Map<string, T>();
  return (key, compute) => {
    let value = memo.get(key);
    if (value !== undefined)
      memo.delete(key); // re-inserted below: the newest in the map's order
    else {
      value = compute();
      if (memo.size >= max) memo.delete(memo.keys().next().value!);
    }
    memo.set(key, value);
    return value;
  };
}

/** `fit` memoized by its points' exact values (a copy of the result per call: callers may keep it). */
export function memoizedFit(fit: PerfFitter): PerfFitter {
  const memo = lruMemo<PerfParams>(MAX_FITS);
  return (points) => ({ ...memo(pointsKey(points), () => fit(points)) });
}

/**
 * fitAndCorrect (model/job-fit.ts) over `fit`, memoized by the points in the order given and
 * `corrected`: equal inputs get the very same JobFit object, which callers must not change. A
 * simulated job refits whenever its key's profile changes, mostly on the points it had (fits and
 * their corrections were a sixth of a simulated day at 16,384 GPUs), and a job that keeps its fit
 * object keeps its batch choice (sim-job.ts).
 */
export function memoizedFitAndCorrect(
  fit: PerfFitter,
): (points: readonly ProfilePoint[], corrected: boolean) => JobFit {
  const memo = lruMemo<JobFit>(MAX_JOB_FITS);
  return (points, corrected) =>
    memo(`${corrected ? 1 : 0}|${pointsKey(points)}`, () => fitAndCorrect(points, fit, corrected));
}
