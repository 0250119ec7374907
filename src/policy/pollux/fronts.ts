/**
 * Non-dominated sorting and crowding distance for two minimized objectives (pymoo 0.4.2
 * semantics, pollux-spec §9.11).
 */

/**
 * Crowding distance of one front (pymoo 0.4.2): fronts of <= 2 points are all infinite;
 * points whose objective vector repeats an earlier one get 0; otherwise, per objective,
 * (next - previous) / (max - min) over the unique points (boundaries infinite, a zero range
 * contributes 0), averaged over the two objectives.
 */
export function crowding(front: readonly number[], F1: Float64Array, F2: Float64Array, crowd: Float64Array): void {
  const n = front.length;
  if (n <= 2) {
    for (const i of front) crowd[i] = Infinity;
    return;
  }
  const unique: number[] = [];
  for (const i of front) {
    let dup = false;
    for (const u of unique) {
      if (F1[u] === F1[i] && F2[u] === F2[i]) {
        dup = true;
        break;
      }
    }
    crowd[i] = 0;
    if (!dup) unique.push(i);
  }
  for (const F of [F1, F2]) {
    const sorted = unique.slice().sort((a, b) => (F[a] as number) - (F[b] as number));
    const m = sorted.length;
    const norm = (F[sorted[m - 1] as number] as number) - (F[sorted[0] as number] as number);
    if (!(norm > 0)) continue;
    for (let p = 0; p < m; p++) {
      const i = sorted[p] as number;
      const prev = p === 0 ? Infinity : (F[i] as number) - (F[sorted[p - 1] as number] as number);
      const nextGap = p === m - 1 ? Infinity : (F[sorted[p + 1] as number] as number) - (F[i] as number);
      crowd[i] = (crowd[i] as number) + prev / norm + nextGap / norm;
    }
  }
  for (const i of unique) crowd[i] = (crowd[i] as number) / 2;
}

/** Non-dominated sorting for two minimized objectives (sweep over points sorted by F1, F2). */
export class FrontSorter {
  private readonly idx: Int32Array;
  private readonly tmp: Int32Array;
  constructor(capacity: number) {
    this.idx = new Int32Array(capacity);
    this.tmp = new Int32Array(capacity);
  }

  /** Fronts (lists of slot ids) of the slots ids[0..count), best first. */
  sort(F1: Float64Array, F2: Float64Array, ids: Int32Array, count: number): number[][] {
    const idx = this.idx;
    idx.set(ids.subarray(0, count));
    mergeSort(idx, this.tmp, count, F1, F2);
    const fronts: number[][] = [];
    const last1: number[] = [];
    const last2: number[] = [];
    for (let q = 0; q < count; q++) {
      const p = idx[q] as number;
      const p1 = F1[p] as number;
      const p2 = F2[p] as number;
      let k = 0;
      // First front whose last member (smallest F2 so far) does not dominate p.
      for (; k < fronts.length; k++) {
        const l2 = last2[k] as number;
        if (p2 < l2 || (p1 === last1[k] && p2 === l2)) break;
      }
      if (k === fronts.length) fronts.push([]);
      (fronts[k] as number[]).push(p);
      last1[k] = p1;
      last2[k] = p2;
    }
    return fronts;
  }
}

/** Stable bottom-up merge sort of a[0..n) by (F1, F2, slot id) ascending. */
function mergeSort(a: Int32Array, tmp: Int32Array, n: number, F1: Float64Array, F2: Float64Array): void {
  let src = a;
  let dst = tmp;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        const x = src[i] as number;
        const y = src[j] as number;
        const x1 = F1[x] as number;
        const y1 = F1[y] as number;
        const takeRight =
          y1 < x1 || (y1 === x1 && ((F2[y] as number) < (F2[x] as number) || (F2[y] === F2[x] && y < x)));
        if (takeRight) {
          dst[k++] = y;
          j++;
        } else {
          dst[k++] = x;
          i++;
        }
      }
      while (i < mid) dst[k++] = src[i++] as number;
      while (j < hi) dst[k++] = src[j++] as number;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src !== a) a.set(src.subarray(0, n));
}
