/**
 * NumPy's default (`kind="quicksort"`) indirect sort: an introsort (median-of-three quicksort,
 * insertion sort below 16 elements, heapsort past the depth limit). It is not stable; HTA sorts
 * queue-length events with it, and the order of equal timestamps changes the queue statistics, so
 * reproducing HTA's numbers exactly needs the same tie order. Pure; returns the permutation.
 */
export function numpyArgsort(values: ArrayLike<number>): Int32Array {
  const n = values.length;
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  if (n < 2) return idx;
  const v = values;
  const less = (a: number, b: number): boolean => v[a]! < v[b]!;
  const swap = (a: number, b: number): void => {
    const t = idx[a]!;
    idx[a] = idx[b]!;
    idx[b] = t;
  };
  const stack: number[] = [];
  const depths: number[] = [];
  let pl = 0;
  let pr = n - 1;
  let cdepth = msb(n) * 2;
  for (;;) {
    if (cdepth < 0) {
      heapsort(idx, pl, pr - pl + 1, v);
    } else {
      while (pr - pl > 15) {
        const pm = pl + ((pr - pl) >> 1);
        if (less(idx[pm]!, idx[pl]!)) swap(pm, pl);
        if (less(idx[pr]!, idx[pm]!)) swap(pr, pm);
        if (less(idx[pm]!, idx[pl]!)) swap(pm, pl);
        const vp = v[idx[pm]!]!;
        let pi = pl;
        let pj = pr - 1;
        swap(pm, pj);
        for (;;) {
          do ++pi;
          while (v[idx[pi]!]! < vp);
          do --pj;
          while (vp < v[idx[pj]!]!);
          if (pi >= pj) break;
          swap(pi, pj);
        }
        swap(pi, pr - 1);
        if (pi - pl < pr - pi) {
          stack.push(pi + 1, pr);
          pr = pi - 1;
        } else {
          stack.push(pl, pi - 1);
          pl = pi + 1;
        }
        depths.push(--cdepth);
      }
      for (let pi = pl + 1; pi <= pr; ++pi) {
        const vi = idx[pi]!;
        const vp = v[vi]!;
        let pj = pi;
        while (pj > pl && vp < v[idx[pj - 1]!]!) {
          idx[pj] = idx[pj - 1]!;
          pj--;
        }
        idx[pj] = vi;
      }
    }
    if (stack.length === 0) break;
    pr = stack.pop()!;
    pl = stack.pop()!;
    cdepth = depths.pop()!;
  }
  return idx;
}

function msb(n: number): number {
  let depth = 0;
  while ((n = Math.floor(n / 2)) > 0) depth++;
  return depth;
}

/** NumPy's indirect heapsort on idx[start .. start+n), 1-based heap indexing. */
function heapsort(idx: Int32Array, start: number, n: number, v: ArrayLike<number>): void {
  const a = (k: number) => idx[start + k - 1]!;
  const set = (k: number, x: number) => {
    idx[start + k - 1] = x;
  };
  let i: number, j: number, tmp: number;
  for (let l = n >> 1; l > 0; --l) {
    tmp = a(l);
    for (i = l, j = l << 1; j <= n;) {
      if (j < n && v[a(j)]! < v[a(j + 1)]!) j += 1;
      if (v[tmp]! < v[a(j)]!) {
        set(i, a(j));
        i = j;
        j += j;
      } else break;
    }
    set(i, tmp);
  }
  for (; n > 1;) {
    tmp = a(n);
    set(n, a(1));
    n -= 1;
    for (i = 1, j = 2; j <= n;) {
      if (j < n && v[a(j)]! < v[a(j + 1)]!) j++;
      if (v[tmp]! < v[a(j)]!) {
        set(i, a(j));
        i = j;
        j += j;
      } else break;
    }
    set(i, tmp);
  }
}
