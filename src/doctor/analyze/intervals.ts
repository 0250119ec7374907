/** Half-open time intervals [start, end) in µs, kept sorted and disjoint after `union`. */
export type Interval = readonly [number, number];

/** Sorted, disjoint union of intervals (touching intervals merge). Pure. */
export function union(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** Total length of disjoint intervals. Pure. */
export function length(intervals: readonly Interval[]): number {
  let sum = 0;
  for (const [s, e] of intervals) sum += e - s;
  return sum;
}

/** Parts of disjoint sorted `a` not covered by disjoint sorted `b`. Pure. */
export function subtract(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let j = 0;
  for (const [s0, e] of a) {
    let s = s0;
    while (j < b.length && b[j]![1] <= s) j++;
    let k = j;
    while (k < b.length && b[k]![0] < e) {
      if (b[k]![0] > s) out.push([s, b[k]![0]]);
      s = Math.max(s, b[k]![1]);
      k++;
    }
    if (s < e) out.push([s, e]);
  }
  return out;
}

/** Intersection of disjoint sorted `a` and `b`. Pure. */
export function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0,
    j = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i]![0], b[j]![0]);
    const e = Math.min(a[i]![1], b[j]![1]);
    if (s < e) out.push([s, e]);
    if (a[i]![1] < b[j]![1]) i++;
    else j++;
  }
  return out;
}

/** Percentages of `total` at 2 decimals that add up to exactly 100 when `values` add up to `total` (largest remainder). Pure. */
export function sharesOf(values: readonly number[], total: number): number[] {
  if (total <= 0) return values.map(() => 0);
  const raw = values.map((v) => (10000 * v) / total);
  const floor = raw.map(Math.floor);
  let left = 10000 - floor.reduce((a, b) => a + b, 0);
  const order = raw.map((r, i) => ({ i, frac: r - Math.floor(r) })).sort((x, y) => y.frac - x.frac);
  for (const { i } of order) {
    if (left <= 0) break;
    floor[i]!++;
    left--;
  }
  return floor.map((x) => x / 100);
}
