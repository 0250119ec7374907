/**
 * Profiles of a profile key: what the jobs of one model (the same application run
 * again with new seeds, data or hyper-parameters) taught about its scaling, so that a new job of
 * the key starts from them instead of from nothing. Learned only from what jobs reported
 * (measured step times and gradient statistics), never from trace tables. Pure: the simulator
 * and the control plane keep the profiles and call these functions.
 */
import { knownParameterCount } from './network-model.js';
import { accumStepTime_s, optimStepTime_s } from './throughput.js';
import type { GradParams, PerfParams, ProfilePoint } from './types.js';

/** Gradient statistics a job reported at one point of its training. */
export interface GradSample extends GradParams {
  /** Fraction of the job's training done when measured, in [0, 1]. */
  progress: number;
}

/**
 * What the jobs of one key taught on one GPU type. Invariants: `points` holds at most one point
 * per configuration (num_nodes, num_replicas, local_bsz), the latest measurement; `grad` is
 * sorted by `progress`, ascending; `max_measured_replicas` is the largest `num_replicas` of
 * `points` (0 when empty).
 */
export interface KeyProfile {
  key: string;
  gpu_type: string;
  points: readonly ProfilePoint[];
  grad: readonly GradSample[];
  /** Jobs whose reports went into this profile. */
  jobs: number;
  max_measured_replicas: number;
  /**
   * Parameters of the key's model, as its latest job reported them (> 0; absent when no job
   * did): the gradient size the cluster network model predicts cross-node sync from.
   */
  model_parameters?: number;
}

/** Identity of a profile point's configuration. */
export function configKey(p: Pick<ProfilePoint, 'num_nodes' | 'num_replicas' | 'local_bsz'>): string {
  return `${p.num_nodes}:${p.num_replicas}:${p.local_bsz}`;
}

/** Identity of a profile point's placement shape (nodes, replicas), whatever its local batch. */
export function shapeKey(p: Pick<ProfilePoint, 'num_nodes' | 'num_replicas'>): string {
  return `${p.num_nodes}:${p.num_replicas}`;
}

/** An empty profile for `key` on `gpu_type`. */
export function emptyProfile(key: string, gpu_type: string): KeyProfile {
  return { key, gpu_type, points: [], grad: [], jobs: 0, max_measured_replicas: 0 };
}

/**
 * Points in configuration order (nodes, replicas, local batch), sorted in place: a fit's last
 * digits depend on the order of its points, and each driver (simulator, control plane) gets a
 * job's points in its own order, so all fit them in this one (model/job-fit.ts `fitAndCorrect`).
 */
export function inConfigOrder<P extends ProfilePoint>(points: P[]): P[] {
  return points.sort(compareConfigs);
}

/**
 * Points of `base` with those of `added` merged in; a configuration measured in both keeps the
 * `added` one (the newer measurement). In configuration order (nodes, replicas, local batch).
 */
export function mergePoints(base: readonly ProfilePoint[], added: readonly ProfilePoint[]): ProfilePoint[] {
  // The same points in the same order as by configuration keys (below), in one pass over a base in
  // configuration order with one point per configuration (what a profile holds), without a string
  // per point: a simulated day at 16,384 GPUs merges a report into its key's profile millions of
  // times (issue #49).
  const newer = inConfigOrder([...added]); // stable: a configuration's points keep their order
  if (!strictlyOrdered(base) || !finiteConfigs(newer)) return mergeByKey(base, added);
  return mergeOrdered(base, newer, true);
}

/**
 * `base` (strictly ascending in configuration order) and `newer` (ascending) merged in order,
 * `newer`'s point where both hold a configuration; with `lastOnly`, only the last of `newer`'s
 * points at a configuration, else all of them.
 */
function mergeOrdered(
  base: readonly ProfilePoint[],
  newer: readonly ProfilePoint[],
  lastOnly: boolean,
): ProfilePoint[] {
  const out: ProfilePoint[] = [];
  let i = 0;
  for (let k = 0; k < newer.length; k++) {
    const p = newer[k]!;
    if (lastOnly && k + 1 < newer.length && compareConfigs(p, newer[k + 1]!) === 0) continue;
    while (i < base.length && compareConfigs(base[i]!, p) < 0) out.push(base[i++]!);
    if (i < base.length && compareConfigs(base[i]!, p) === 0) i++; // replaced by `newer`'s point
    out.push(p);
  }
  while (i < base.length) out.push(base[i++]!);
  return out;
}

function mergeByKey(base: readonly ProfilePoint[], added: readonly ProfilePoint[]): ProfilePoint[] {
  const byConfig = new Map<string, ProfilePoint>();
  for (const p of base) byConfig.set(configKey(p), p);
  for (const p of added) byConfig.set(configKey(p), p);
  return inConfigOrder([...byConfig.values()]);
}

type Config = Pick<ProfilePoint, 'num_nodes' | 'num_replicas' | 'local_bsz'>;

/** inConfigOrder's comparison. */
function compareConfigs(a: Config, b: Config): number {
  return a.num_nodes - b.num_nodes || a.num_replicas - b.num_replicas || a.local_bsz - b.local_bsz;
}

/** Whether every configuration is of finite numbers (where comparing them is comparing their keys). */
function finiteConfigs(points: readonly Config[]): boolean {
  for (const p of points)
    if (!Number.isFinite(p.num_nodes) || !Number.isFinite(p.num_replicas) || !Number.isFinite(p.local_bsz))
      return false;
  return true;
}

/** Whether `points` ascend strictly in configuration order (one point per configuration), all finite. */
function strictlyOrdered(points: readonly Config[]): boolean {
  for (let i = 1; i < points.length; i++) if (!(compareConfigs(points[i - 1]!, points[i]!) < 0)) return false;
  return finiteConfigs(points);
}

/** A reported progress as a profile keeps it: clamped to [0, 1]. */
export function clampProgress(progress: number): number {
  return Math.min(Math.max(progress, 0), 1);
}

/**
 * The profile after one job's reports: its points merged in, its gradient samples merged by
 * progress (a sample at the same progress replaces the older one), `jobs` counted once per new
 * job (`new_job`), the reported parameter count when > 0 (else the profile's). Returns a new
 * object; `profile` is not changed.
 */
export function addToProfile(
  profile: KeyProfile,
  points: readonly ProfilePoint[],
  grad: readonly GradSample[],
  new_job: boolean,
  model_parameters?: number,
): KeyProfile {
  const merged = mergePoints(profile.points, points);
  const byProgress = new Map<number, GradSample>();
  for (const g of profile.grad) byProgress.set(g.progress, g);
  for (const g of grad) {
    const progress = clampProgress(g.progress);
    byProgress.set(progress, { ...g, progress });
  }
  return {
    key: profile.key,
    gpu_type: profile.gpu_type,
    points: merged,
    grad: [...byProgress.values()].sort((a, b) => a.progress - b.progress),
    jobs: profile.jobs + (new_job ? 1 : 0),
    max_measured_replicas: merged.reduce((m, p) => Math.max(m, p.num_replicas), 0),
    ...withParameters(knownParameterCount(model_parameters) ?? profile.model_parameters),
  };
}

const withParameters = (model_parameters: number | undefined): { model_parameters?: number } =>
  model_parameters === undefined ? {} : { model_parameters };

/**
 * The points a job's model is fitted on: its own, plus the profile's at configurations the job
 * has not measured itself (its own measurement of a configuration wins). In configuration order.
 */
export function modelPoints(own: readonly ProfilePoint[], profile: KeyProfile | undefined): ProfilePoint[] {
  const mine = inConfigOrder([...own]);
  if (!profile) return mine;
  const theirs = profile.points;
  if (!strictlyOrdered(theirs) || !finiteConfigs(mine)) {
    const measured = new Set(own.map(configKey));
    return inConfigOrder([...own, ...theirs.filter((p) => !measured.has(configKey(p)))]);
  }
  // What the sort of both gives, by one merge of the ordered lists (no string per point: every
  // refit of a simulated job reads its key's whole profile; issue #49).
  return mergeOrdered(theirs, mine, false);
}

/**
 * The points of `report` at configurations that `points` (a profile's) does not hold, each
 * configuration once (its first point), in report order.
 */
export function newConfigs(points: readonly ProfilePoint[], report: readonly ProfilePoint[]): ProfilePoint[] {
  const added: ProfilePoint[] = [];
  if (!strictlyOrdered(points) || !finiteConfigs(report)) {
    const known = new Set(points.map(configKey));
    for (const p of report) {
      const config = configKey(p);
      if (known.has(config)) continue;
      known.add(config);
      added.push(p);
    }
    return added;
  }
  // A binary search of the ordered profile, not a string per point of it per report (issue #49).
  for (const p of report) {
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareConfigs(points[mid]!, p) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < points.length && compareConfigs(points[lo]!, p) === 0) continue;
    if (added.some((a) => compareConfigs(a, p) === 0)) continue;
    added.push(p);
  }
  return added;
}

/**
 * Gradient statistics of the profile at `progress` (fraction of training done), linearly
 * interpolated between the nearest samples and held constant beyond the ends; undefined when
 * the profile has no sample.
 */
export function gradAt(profile: KeyProfile, progress: number): GradParams | undefined {
  const g = profile.grad;
  if (g.length === 0) return undefined;
  const first = g[0]!;
  const last = g[g.length - 1]!;
  if (progress <= first.progress) return { sqr: first.sqr, var: first.var };
  if (progress >= last.progress) return { sqr: last.sqr, var: last.var };
  let hi = 1;
  while (g[hi]!.progress < progress) hi++;
  const a = g[hi - 1]!;
  const b = g[hi]!;
  const t = (progress - a.progress) / (b.progress - a.progress);
  return { sqr: a.sqr + t * (b.sqr - a.sqr), var: a.var + t * (b.var - a.var) };
}

/**
 * How far a job's own measurements `own` are from its key's profile, anchored on the profile's
 * measurements rather than on its fitted model `perf` alone, so that a job of the profile's model
 * agrees even where `perf` is off. A job whose error exceeds the caller's tolerance is not the
 * profile's model (other data, other model size, another GPU): its model is then fitted on its
 * own points only. Each own point is compared with the profile's point nearest in local batch
 * (on a log scale, at most 1.5x apart; without one the point is not judged), `perf` correcting
 * only for the difference in local batch: the optimizer-step time with a point of the same shape
 * (num_nodes, num_replicas), when the profile measured that shape; the accumulation-step time
 * (the computation, which does not depend on the placement) with a point of the same shape or
 * else of any shape. So a job that computes or synchronizes at another speed is caught at its
 * first point, and one at a shape the profile never measured by its computation alone. Times
 * that are both below MIN_JUDGED_STEP_S are not compared. 0 when `own` or the profile's points
 * are empty. Pure.
 */
export function measuredError(perf: PerfParams, profile: KeyProfile, own: readonly ProfilePoint[]): number {
  let worst = 0;
  const relative = (predicted: number, measured: number): number =>
    measured > 0 && Math.max(predicted, measured) >= MIN_JUDGED_STEP_S ? Math.abs(predicted - measured) / measured : 0;
  for (const p of own) {
    const sameShape = nearestBatch(
      profile.points.filter((q) => q.num_nodes === p.num_nodes && q.num_replicas === p.num_replicas),
      p.local_bsz,
    );
    const anyShape = sameShape ?? nearestBatch(profile.points, p.local_bsz);
    if (anyShape) {
      const scale = anyShape.accum_step_time_s / accumStepTime_s(perf, anyShape.local_bsz);
      worst = Math.max(worst, relative(accumStepTime_s(perf, p.local_bsz) * scale, p.accum_step_time_s));
    }
    if (sameShape) {
      const scale =
        sameShape.optim_step_time_s /
        optimStepTime_s(perf, sameShape.num_nodes, sameShape.num_replicas, sameShape.local_bsz);
      worst = Math.max(
        worst,
        relative(optimStepTime_s(perf, p.num_nodes, p.num_replicas, p.local_bsz) * scale, p.optim_step_time_s),
      );
    }
  }
  return worst;
}

/**
 * Default tolerance of `measuredError`, with room because step - sync time is not quite
 * placement-free and the fit's correction between local batches is a model: jobs of one model
 * stay below ~0.32 in the simulator's traces, while a job 2x slower scores 0.5.
 */
export const MEASURED_ERROR_TOLERANCE = 0.4;

/**
 * Step times both below this (s) are not compared by `measuredError`: timing noise alone exceeds
 * the tolerance there. Two identical runs of the CPU digits example (examples/digits, 1 replica,
 * local batch 64) measured 2.77 ms and 1.28 ms per step on a 2-core machine, and the second
 * discarded the first's profile. Training steps on a GPU, and every configuration of the
 * simulator's traces (7 ms and more), are longer.
 */
export const MIN_JUDGED_STEP_S = 0.005;

/** Largest ratio of local batches between an own point and the profile point it is judged by. */
const MAX_ANCHOR_BATCH_RATIO = 1.5;

/** The point nearest to `local_bsz` on a log scale, if within MAX_ANCHOR_BATCH_RATIO. */
function nearestBatch(points: readonly ProfilePoint[], local_bsz: number): ProfilePoint | undefined {
  let best: ProfilePoint | undefined;
  let bestDistance = Math.log(MAX_ANCHOR_BATCH_RATIO) + 1e-12;
  for (const q of points) {
    const distance = Math.abs(Math.log(q.local_bsz / local_bsz));
    if (distance < bestDistance) {
      best = q;
      bestDistance = distance;
    }
  }
  return best;
}
