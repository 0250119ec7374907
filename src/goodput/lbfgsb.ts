/**
 * A compact L-BFGS-B (Byrd, Lu, Nocedal & Zhu 1995; version 3.0 as in scipy) for small
 * problems: the limited-memory BFGS matrix is formed densely (n x n) from the stored pairs,
 * then the generalized Cauchy point, the subspace minimization over the free variables (with
 * the 3.0 projection and its backtracking fallback), and the More-Thuente line search follow
 * the reference algorithm. Defaults are scipy's: memory 10, pgtol 1e-5, factr 1e7, 20
 * evaluations per line search. Pure; intended for n up to a few dozen.
 */
import { MoreThuente } from './line-search.js';

/** Objective: writes the gradient into `grad` and returns f(x). */
export type ObjectiveWithGradient = (x: Float64Array, grad: Float64Array) => number;

export interface MinimizeOptions {
  /** Number of stored correction pairs. Default 10. */
  memory?: number;
  /** Projected-gradient tolerance (infinity norm). Default 1e-5. */
  pgtol?: number;
  /** Relative function-decrease tolerance. Default 1e7 * machine epsilon. */
  ftol?: number;
  /** Iteration limit. Default 15000. */
  maxIterations?: number;
}

export interface MinimizeResult {
  x: Float64Array;
  f: number;
  iterations: number;
  evaluations: number;
  converged: boolean;
}

const EPS = 2.220446049250313e-16;
const MAX_LINE_SEARCH_EVALS = 20;

/**
 * Minimizes `fg` over the box lower <= x <= upper (bounds may be infinite; lower[i] ===
 * upper[i] pins x[i]). The start point is projected into the box; no evaluation leaves it.
 */
export function minimizeBounded(
  fg: ObjectiveWithGradient,
  x0: ArrayLike<number>,
  lower: ArrayLike<number>,
  upper: ArrayLike<number>,
  options: MinimizeOptions = {},
): MinimizeResult {
  const n = x0.length;
  const m = options.memory ?? 10;
  const pgtol = options.pgtol ?? 1e-5;
  const ftol = options.ftol ?? 1e7 * EPS;
  const maxIter = options.maxIterations ?? 15000;
  const lo = Float64Array.from(lower);
  const hi = Float64Array.from(upper);
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.min(Math.max(x0[i] as number, lo[i] as number), hi[i] as number);
  const boxed = Array.from(lo).every(Number.isFinite) && Array.from(hi).every(Number.isFinite);

  const g = new Float64Array(n);
  const xs = new Float64Array(n); // x at the start of the iteration
  const gs = new Float64Array(n);
  const xbar = new Float64Array(n);
  const d = new Float64Array(n);
  const B = new Float64Array(n * n);
  const work = new Float64Array(n);
  /** 1 for variables held at a bound at the Cauchy point (or pinned), 0 for free ones. */
  const fixed = new Uint8Array(n);
  const S: Float64Array[] = [];
  const Y: Float64Array[] = [];
  let theta = 1;
  let evaluations = 1;
  let f = fg(x, g);
  if (projectedGradientNorm(x, g, lo, hi) <= pgtol) return { x, f, iterations: 0, evaluations, converged: true };

  let iter = 0;
  let converged = false;
  while (iter < maxIter) {
    buildBfgsMatrix(B, work, n, theta, S, Y);
    cauchyPoint(x, g, lo, hi, B, xbar, fixed);
    if (S.length > 0) subspaceMinimize(x, g, lo, hi, B, xbar, fixed);
    let dnorm2 = 0;
    let gd = 0;
    for (let i = 0; i < n; i++) {
      d[i] = (xbar[i] as number) - (x[i] as number);
      dnorm2 += (d[i] as number) ** 2;
      gd += (g[i] as number) * (d[i] as number);
    }
    if (!(gd < 0)) {
      // Not a descent direction: restart from steepest descent once, else give up.
      if (S.length === 0) break;
      S.length = 0;
      Y.length = 0;
      theta = 1;
      continue;
    }
    let stpmax = 1e10;
    if (iter === 0) stpmax = 1;
    else {
      for (let i = 0; i < n; i++) {
        const di = d[i] as number;
        if (di < 0 && Number.isFinite(lo[i] as number)) {
          const gap = (lo[i] as number) - (x[i] as number);
          if (gap >= 0) stpmax = 0;
          else if (di * stpmax < gap) stpmax = gap / di;
        } else if (di > 0 && Number.isFinite(hi[i] as number)) {
          const gap = (hi[i] as number) - (x[i] as number);
          if (gap <= 0) stpmax = 0;
          else if (di * stpmax > gap) stpmax = gap / di;
        }
      }
    }
    const stp0 = iter === 0 && !boxed ? Math.min(1 / Math.sqrt(dnorm2), stpmax) : 1;
    xs.set(x);
    gs.set(g);
    const fOld = f;
    const search = new MoreThuente(f, gd, stp0, stpmax);
    let ok = false;
    for (let evals = 0; evals < MAX_LINE_SEARCH_EVALS; evals++) {
      const stp = search.stp;
      if (stp === 1) x.set(xbar);
      else for (let i = 0; i < n; i++) x[i] = (xs[i] as number) + stp * (d[i] as number);
      f = fg(x, g);
      evaluations++;
      let gdNew = 0;
      for (let i = 0; i < n; i++) gdNew += (g[i] as number) * (d[i] as number);
      if (!Number.isFinite(f)) {
        // Treat as a failed search (the box keeps the model finite in practice).
        break;
      }
      const status = search.next(f, gdNew);
      if (status !== 'eval') {
        ok = true;
        break;
      }
    }
    if (!ok) {
      x.set(xs);
      g.set(gs);
      f = fOld;
      if (S.length === 0) break;
      S.length = 0;
      Y.length = 0;
      theta = 1;
      continue;
    }
    iter++;
    if (projectedGradientNorm(x, g, lo, hi) <= pgtol) {
      converged = true;
      break;
    }
    if (fOld - f <= ftol * Math.max(Math.abs(fOld), Math.abs(f), 1)) {
      converged = true;
      break;
    }
    // Correction pair, skipped unless the curvature condition holds well enough.
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    let sy = 0;
    let yy = 0;
    let gsOld = 0;
    for (let i = 0; i < n; i++) {
      s[i] = (x[i] as number) - (xs[i] as number);
      y[i] = (g[i] as number) - (gs[i] as number);
      sy += (s[i] as number) * (y[i] as number);
      yy += (y[i] as number) * (y[i] as number);
      gsOld += (gs[i] as number) * (s[i] as number);
    }
    if (sy > EPS * -gsOld) {
      if (S.length === m) {
        S.shift();
        Y.shift();
      }
      S.push(s);
      Y.push(y);
      theta = yy / sy;
    }
  }
  return { x, f, iterations: iter, evaluations, converged };
}

/** Largest component of the projected gradient (scipy's sbgnrm). */
function projectedGradientNorm(x: Float64Array, g: Float64Array, lo: Float64Array, hi: Float64Array): number {
  let norm = 0;
  for (let i = 0; i < x.length; i++) {
    let gi = g[i] as number;
    if (gi < 0) gi = Math.max((x[i] as number) - (hi[i] as number), gi);
    else gi = Math.min((x[i] as number) - (lo[i] as number), gi);
    norm = Math.max(norm, Math.abs(gi));
  }
  return norm;
}

/** B = theta I updated by BFGS with the stored pairs, oldest first (= the compact L-BFGS form). */
function buildBfgsMatrix(
  B: Float64Array,
  Bs: Float64Array,
  n: number,
  theta: number,
  S: Float64Array[],
  Y: Float64Array[],
): void {
  B.fill(0);
  for (let i = 0; i < n; i++) B[i * n + i] = theta;
  for (let k = 0; k < S.length; k++) {
    const s = S[k] as Float64Array;
    const y = Y[k] as Float64Array;
    let sBs = 0;
    let ys = 0;
    for (let i = 0; i < n; i++) {
      let v = 0;
      const row = i * n;
      for (let j = 0; j < n; j++) v += (B[row + j] as number) * (s[j] as number);
      Bs[i] = v;
      sBs += (s[i] as number) * v;
      ys += (y[i] as number) * (s[i] as number);
    }
    const inv1 = 1 / sBs;
    const inv2 = 1 / ys;
    // Symmetric rank-two update: fill the upper triangle and mirror it.
    for (let i = 0; i < n; i++) {
      const a = (Bs[i] as number) * inv1;
      const c = (y[i] as number) * inv2;
      for (let j = i; j < n; j++) {
        const v = (B[i * n + j] as number) - a * (Bs[j] as number) + c * (y[j] as number);
        B[i * n + j] = v;
        B[j * n + i] = v;
      }
    }
  }
}

function quadForm(B: Float64Array, n: number, u: Float64Array, v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < n; i++) {
    const ui = u[i] as number;
    if (ui === 0) continue;
    for (let j = 0; j < n; j++) s += ui * (B[i * n + j] as number) * (v[j] as number);
  }
  return s;
}

/**
 * Generalized Cauchy point: the first local minimizer of the quadratic model along the
 * projected steepest-descent path x(t) = P(x - t g). Written into `xc`.
 */
function cauchyPoint(
  x: Float64Array,
  g: Float64Array,
  lo: Float64Array,
  hi: Float64Array,
  B: Float64Array,
  xc: Float64Array,
  fixed: Uint8Array,
): void {
  const n = x.length;
  const tBreak = new Float64Array(n);
  const d = new Float64Array(n);
  const z = new Float64Array(n);
  const order: number[] = [];
  for (let i = 0; i < n; i++) {
    const gi = g[i] as number;
    let t = Infinity;
    if (gi < 0) t = ((x[i] as number) - (hi[i] as number)) / gi;
    else if (gi > 0) t = ((x[i] as number) - (lo[i] as number)) / gi;
    tBreak[i] = t;
    fixed[i] = t === 0 || lo[i] === hi[i] ? 1 : 0;
    d[i] = fixed[i] ? 0 : -gi;
    if (t > 0 && Number.isFinite(t)) order.push(i);
  }
  order.sort((a, b) => (tBreak[a] as number) - (tBreak[b] as number));
  let tOld = 0;
  let f1 = 0;
  for (let i = 0; i < n; i++) f1 -= (d[i] as number) * (d[i] as number);
  let f2 = quadForm(B, n, d, d);
  let dtMin = f2 > 0 ? -f1 / f2 : 0;
  let k = 0;
  if (f1 < 0) {
    while (k < order.length) {
      const i = order[k] as number;
      const tb = tBreak[i] as number;
      const dt = tb - tOld;
      if (dtMin < dt) break;
      // Move to the breakpoint; variable i hits its bound and leaves the path.
      for (let j = 0; j < n; j++) z[j] = (z[j] as number) + dt * (d[j] as number);
      z[i] = ((d[i] as number) > 0 ? (hi[i] as number) : (lo[i] as number)) - (x[i] as number);
      d[i] = 0;
      fixed[i] = 1;
      tOld = tb;
      k++;
      // Later breakpoints at the same t are handled by the next iterations with dt = 0.
      let gd = 0;
      for (let j = 0; j < n; j++) gd += (g[j] as number) * (d[j] as number);
      f1 = gd + quadForm(B, n, d, z);
      f2 = quadForm(B, n, d, d);
      if (!(f1 < 0) || !(f2 > 0)) {
        dtMin = 0;
        break;
      }
      dtMin = -f1 / f2;
    }
  } else {
    dtMin = 0;
  }
  dtMin = Math.max(dtMin, 0);
  for (let i = 0; i < n; i++) {
    const v = (x[i] as number) + (z[i] as number) + dtMin * (d[i] as number);
    xc[i] = Math.min(Math.max(v, lo[i] as number), hi[i] as number);
  }
}

/**
 * Minimizes the quadratic model over the variables free at the Cauchy point `xc` (in place):
 * Newton step on the free subspace, projected into the box; if that is not a descent
 * direction from x, the step is truncated to the box instead (L-BFGS-B 3.0).
 */
function subspaceMinimize(
  x: Float64Array,
  g: Float64Array,
  lo: Float64Array,
  hi: Float64Array,
  B: Float64Array,
  xc: Float64Array,
  fixed: Uint8Array,
): void {
  const n = x.length;
  const free: number[] = [];
  for (let i = 0; i < n; i++) if (!fixed[i]) free.push(i);
  const k = free.length;
  if (k === 0) return;
  // Reduced gradient r = g + B (xc - x) on the free variables.
  const r = new Float64Array(k);
  for (let a = 0; a < k; a++) {
    const i = free[a] as number;
    let v = g[i] as number;
    for (let j = 0; j < n; j++) v += (B[i * n + j] as number) * ((xc[j] as number) - (x[j] as number));
    r[a] = v;
  }
  // Solve B_FF du = -r by Cholesky.
  const L = new Float64Array(k * k);
  for (let a = 0; a < k; a++) {
    for (let b = 0; b <= a; b++) {
      let sum = B[(free[a] as number) * n + (free[b] as number)] as number;
      for (let c = 0; c < b; c++) sum -= (L[a * k + c] as number) * (L[b * k + c] as number);
      if (a === b) {
        if (!(sum > 0)) return; // not positive definite: keep the Cauchy point
        L[a * k + a] = Math.sqrt(sum);
      } else {
        L[a * k + b] = sum / (L[b * k + b] as number);
      }
    }
  }
  const du = new Float64Array(k);
  for (let a = 0; a < k; a++) {
    let sum = -(r[a] as number);
    for (let c = 0; c < a; c++) sum -= (L[a * k + c] as number) * (du[c] as number);
    du[a] = sum / (L[a * k + a] as number);
  }
  for (let a = k - 1; a >= 0; a--) {
    let sum = du[a] as number;
    for (let c = a + 1; c < k; c++) sum -= (L[c * k + a] as number) * (du[c] as number);
    du[a] = sum / (L[a * k + a] as number);
  }
  // Projected Newton point; fall back to the truncated step if it is not a descent direction.
  const projected = Float64Array.from(xc);
  for (let a = 0; a < k; a++) {
    const i = free[a] as number;
    projected[i] = Math.min(Math.max((xc[i] as number) + (du[a] as number), lo[i] as number), hi[i] as number);
  }
  let dd = 0;
  for (let i = 0; i < n; i++) dd += ((projected[i] as number) - (x[i] as number)) * (g[i] as number);
  if (dd <= 0) {
    xc.set(projected);
    return;
  }
  let alpha = 1;
  for (let a = 0; a < k; a++) {
    const i = free[a] as number;
    const step = du[a] as number;
    if (step < 0) {
      const gap = (lo[i] as number) - (xc[i] as number);
      if (gap >= 0) alpha = 0;
      else if (step * alpha < gap) alpha = gap / step;
    } else if (step > 0) {
      const gap = (hi[i] as number) - (xc[i] as number);
      if (gap <= 0) alpha = 0;
      else if (step * alpha > gap) alpha = gap / step;
    }
  }
  for (let a = 0; a < k; a++) {
    const i = free[a] as number;
    xc[i] = (xc[i] as number) + alpha * (du[a] as number);
  }
}
