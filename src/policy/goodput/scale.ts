/**
 * What the goodput policy does differently on a large cluster (issue #49, docs/policy.md "How the
 * decision scales"): below SCALE_GPUS every evaluation is exact, so the simulator's published
 * reproductions (64 GPUs) are unchanged; at and above it a job's best goodput at a size is found
 * by a coarse-then-fine search over the 50 candidate batch sizes instead of trying all 50, and each
 * round reports how far its sizing is from the Lagrangian bound of the sizing problem. Pure.
 */
import { splitAccumSteps, splitLocalBsz } from '../../goodput/batch-split.js';
import { batchCandidates, goodputOf, NUM_BATCH_CANDIDATES } from '../../goodput/optimize.js';
import { bestGoodput, type BestGoodputFn } from '../../goodput/speedup.js';
import type { GoodputModel } from '../../goodput/types.js';

/** Clusters of at least this many GPUs use the approximate evaluations. */
export const SCALE_GPUS = 512;

/** Stride of the coarse pass of approxBestGoodput. */
const COARSE = 4;

/**
 * Approximately the best goodput of `optimizeBatch` (same candidates, same splits): every 4th
 * candidate, then the 6 around the best of those: about 19 evaluations instead of 50. Goodput is
 * not unimodal in the batch (accumulation steps make it saw-toothed), so a narrower search (a
 * golden section) missed the best by 3%; this one is within 0.5% on the tested models (the test
 * beside this file). Never above the exact value. No closure per call (the first round makes
 * hundreds of these calls before the JIT has compiled them): candidates go through `evaluate`.
 */
export const approxBestGoodput: BestGoodputFn = (model, num_nodes, num_replicas, batch = {}) => {
  if (num_replicas <= 0) return 0;
  if (batch.fixed_batch_size !== undefined) return bestGoodput(model, num_nodes, num_replicas, batch);
  const limits = model.limits;
  const B0 = limits.init_batch_size;
  const maxB = batch.max_batch_size === undefined ? limits.max_batch_size : Math.max(B0, batch.max_batch_size);
  const minB = Math.max(B0, limits.min_local_bsz * num_replicas);
  const last = NUM_BATCH_CANDIDATES - 1;
  const candidates = batchCandidates(minB, maxB);
  MEMO.fill(NaN);
  // Every COARSE-th candidate, then the ones around the best of those. Values are read from MEMO,
  // which `evaluate` fills: a double returned by a call the JIT did not inline is boxed, and a
  // first round with a model per job makes millions of these (issue #49).
  evaluate(model, candidates, 0, num_nodes, num_replicas);
  let bestIndex = 0;
  let best = MEMO[0]!;
  for (let i = COARSE; i <= last; i += COARSE) {
    evaluate(model, candidates, i, num_nodes, num_replicas);
    if (MEMO[i]! > best) {
      best = MEMO[i]!;
      bestIndex = i;
    }
  }
  evaluate(model, candidates, last, num_nodes, num_replicas);
  if (MEMO[last]! > best) {
    best = MEMO[last]!;
    bestIndex = last;
  }
  const lo = Math.max(0, bestIndex - COARSE + 1);
  const hi = Math.min(last, bestIndex + COARSE - 1);
  for (let i = lo; i <= hi; i++) {
    evaluate(model, candidates, i, num_nodes, num_replicas);
    best = Math.max(best, MEMO[i]!);
  }
  return best;
};

/** Puts the goodput of candidate `i` of approxBestGoodput's current call in MEMO, unless it is there. */
function evaluate(
  model: GoodputModel,
  candidates: Float64Array,
  i: number,
  num_nodes: number,
  num_replicas: number,
): void {
  if (MEMO[i] === MEMO[i]) return; // not NaN: known
  const limits = model.limits;
  // splitBatch's two numbers without its object (millions of candidates in a first round).
  const accum = splitAccumSteps(limits, candidates[i]!, num_replicas);
  const local_bsz = splitLocalBsz(candidates[i]!, num_replicas, accum);
  MEMO[i] =
    local_bsz >= limits.min_local_bsz && local_bsz <= limits.max_local_bsz
      ? goodputOf(model, num_nodes, num_replicas, local_bsz, accum)
      : 0;
}

/** Scratch of approxBestGoodput (synchronous, so one is enough): goodput per candidate, NaN unknown. */
const MEMO = new Float64Array(NUM_BATCH_CANDIDATES);

/** One job of the sizing problem: its value at each size it may take (0 included). */
export interface SizedValues {
  /** Sizes (replica counts, ascending, 0 first). */
  sizes: readonly number[];
  /** Value at each size. */
  values: readonly number[];
}

/**
 * Upper bound of max sum_j v_j(r_j) s.t. sum_j r_j <= gpus over the sizes given per job: the
 * optimum of its linear relaxation (equal to the Lagrangian dual): every job's upper concave hull
 * from size 0, its segments taken by slope (steepest first) until they fill the GPUs, the last one
 * fractionally. Exact; cost: the hulls plus a linear-time selection (`fill`).
 */
export function lagrangianBound(jobs: readonly SizedValues[], gpus: number): number {
  const builder = new BoundBuilder();
  for (const j of jobs) builder.add(j.sizes, j.values, j.sizes.length);
  return builder.bound(gpus);
}

/**
 * lagrangianBound fed one job at a time, from arrays the caller may reuse: each job's hull
 * segments go into growing typed arrays, so 5,000 jobs a round make no array per job (issue #49).
 */
export class BoundBuilder {
  private base = 0;
  private count = 0;
  private sizes: Float64Array;
  private gains: Float64Array;
  /** Indices of the hull's points (a typed array: `hull.length = 0` per job reallocated it). */
  private hull = new Int32Array(64);
  /** Slope of each job's first (steepest) segment, for `bound`'s cut. */
  private firsts: Float64Array;
  private firstCount = 0;
  /** Whether some first segment is narrower than 1 (then `bound` does not cut). */
  private narrowFirst = false;

  /**
   * `capacity`: segments expected, `jobs`: jobs expected. Sized for them, the arrays are not
   * replaced while jobs are added (a first replacement changes the fields' kind, which cancelled
   * the JIT's compilation of `add` in the first round; issue #49).
   */
  constructor(capacity = 1024, jobs = 1024) {
    this.sizes = new Float64Array(Math.max(16, capacity));
    this.gains = new Float64Array(Math.max(16, capacity));
    this.firsts = new Float64Array(Math.max(16, jobs));
  }

  /** One job: its values `ys` at the ascending sizes `xs` (0 first), the first `n` of each. */
  add(xs: ArrayLike<number>, ys: ArrayLike<number>, n: number): void {
    if (this.hull.length < n) this.hull = new Int32Array(2 * n);
    const hull = this.hull;
    let top = 0; // points on the hull: hull[0, top)
    this.base += ys[0]!;
    for (let k = 0; k < n; k++) {
      while (top >= 2) {
        const a = hull[top - 2]!;
        const b = hull[top - 1]!;
        if ((xs[b]! - xs[a]!) * (ys[k]! - ys[a]!) - (ys[b]! - ys[a]!) * (xs[k]! - xs[a]!) >= 0) top--;
        else break;
      }
      hull[top++] = k;
    }
    for (let h = 1; h < top; h++) {
      const gain = ys[hull[h]!]! - ys[hull[h - 1]!]!;
      if (gain <= 0) break;
      if (this.count === this.sizes.length) {
        this.sizes = doubled(this.sizes);
        this.gains = doubled(this.gains);
      }
      const size = xs[hull[h]!]! - xs[hull[h - 1]!]!;
      this.sizes[this.count] = size;
      this.gains[this.count++] = gain;
      if (h === 1) {
        if (this.firstCount === this.firsts.length) this.firsts = doubled(this.firsts);
        this.firsts[this.firstCount++] = gain / size;
        if (!(size >= 1)) this.narrowFirst = true;
      }
    }
  }

  /**
   * The bound for `gpus` GPUs over the jobs added (reorders the segments: call once). Segments
   * flatter than the ceil(gpus)-th steepest first segment are left out before the selection: those
   * first segments (one per job, each at least 1 wide) fill the GPUs by themselves, so the
   * relaxation never reaches a flatter one. At 5,000 jobs that leaves a fifth of the segments for
   * the selection, which the first round runs before the JIT has compiled it (issue #49). The
   * bound is the same up to the order of its floating-point sum.
   */
  bound(gpus: number): number {
    let n = this.count;
    const sizes = this.sizes;
    const gains = this.gains;
    const enough = Math.ceil(gpus);
    if (!this.narrowFirst && enough >= 1 && this.firstCount > enough) {
      const firsts = this.firsts.slice(0, this.firstCount).sort();
      const cut = firsts[this.firstCount - enough]!;
      let kept = 0;
      for (let k = 0; k < n; k++) {
        // Kept unless flatter than the cut (NaN slopes are kept, as the selection had them).
        if (!(gains[k]! / sizes[k]! < cut)) {
          sizes[kept] = sizes[k]!;
          gains[kept++] = gains[k]!;
        }
      }
      n = kept;
    }
    return this.base + fill(sizes.subarray(0, n), gains.subarray(0, n), gpus);
  }
}

/** A copy of `a` in an array twice as long. */
function doubled(a: Float64Array): Float64Array<ArrayBuffer> {
  const out = new Float64Array(2 * a.length);
  out.set(a);
  return out;
}

/**
 * Most total gain of segments (size, gain) within `capacity`, a fraction of one allowed: the
 * steepest segments (gain per size) until the capacity is full. A quickselect on the slopes
 * (expected linear time; a sort of 50,000 segments with a comparator was the round's largest
 * cost at 5,000 jobs): pick a pivot slope, take every steeper segment when they fit and continue
 * among the flatter ones, else continue among the steeper. Reorders `sizes` and `gains`. The
 * slopes are divided once, and the swaps written inline: the first round runs this loop over
 * tens of thousands of segments before the JIT has compiled it.
 */
function fill(sizes: Float64Array, gains: Float64Array, capacity: number): number {
  const slopes = new Float64Array(sizes.length);
  for (let k = 0; k < sizes.length; k++) slopes[k] = gains[k]! / sizes[k]!;
  let lo = 0;
  let hi = sizes.length; // undecided segments: [lo, hi)
  let left = capacity;
  let gain = 0;
  let seed = 1;
  while (hi > lo && left > 0) {
    // Pivot: a pseudo-random undecided segment (deterministic).
    seed = (seed * 1103515245 + 12345) >>> 0;
    const p = lo + (seed % (hi - lo));
    const pivot = slopes[p]!;
    // Partition [lo, hi): steeper than the pivot first, then equal, then flatter.
    let a = lo;
    let b = hi;
    for (let k = lo; k < b;) {
      const slope = slopes[k]!;
      // j: where segment k goes (a steeper one to the front, a flatter one to the back).
      let j = k;
      if (slope > pivot) j = a++;
      else if (slope < pivot) j = --b;
      if (j !== k) {
        const s = sizes[k]!;
        sizes[k] = sizes[j]!;
        sizes[j] = s;
        const g = gains[k]!;
        gains[k] = gains[j]!;
        gains[j] = g;
        slopes[k] = slopes[j]!;
        slopes[j] = slope;
      }
      // A flatter one swapped in an undecided segment at k: look at k again.
      if (!(slope < pivot)) k++;
    }
    let steepSize = 0;
    let steepGain = 0;
    for (let k = lo; k < a; k++) {
      steepSize += sizes[k]!;
      steepGain += gains[k]!;
    }
    if (steepSize > left) {
      hi = a; // the capacity ends among the steeper segments
      continue;
    }
    left -= steepSize;
    gain += steepGain;
    // The segments of the pivot's slope: all of them or a fraction; the rest are flatter.
    let tiedSize = 0;
    for (let k = a; k < b; k++) tiedSize += sizes[k]!;
    const taken = Math.min(tiedSize, left);
    gain += pivot * taken;
    left -= taken;
    lo = b;
  }
  return gain;
}
