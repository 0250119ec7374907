/**
 * Fit of the seven throughput parameters to profiled step times (pollux-spec §3.2): minimize
 * RMSE(log t_acc) + RMSE(log t_opt) + 1e-3 (gamma - 1)^2 + 1e-2 ((beta_n/alpha_n)^2 +
 * (beta_r/alpha_r)^2) over the box alpha, beta >= 1e-8, gamma in [1, 10], with the artifact's
 * pinning rules and its post-fit prior on the inter-node parameters.
 */
import { minimizeBounded } from './lbfgsb.js';
import type { PerfParams, ProfilePoint } from './types.js';

const LOWER = 1e-8;
/** Start point of the fit: (alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma). */
const START: readonly number[] = [0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001];
/** Smallest time accepted from a measurement (s); guards log(0). */
const MIN_TIME_S = 1e-12;

const enum Link {
  InterNode = 0,
  IntraNode = 1,
  None = 2,
}

/**
 * Fits PerfParams to `points` (pollux-spec §3.2). Pinned to their start/lower values: alpha_c
 * := mean(t_acc) / 2 if only one distinct local batch size was seen; alpha_n, beta_n := 1e-8 if
 * no point spans several nodes; alpha_r, beta_r := 1e-8 if no single-node multi-replica point;
 * beta_n, beta_r := 1e-8 if no point has more than 2 replicas. After the fit, without
 * multi-node points, alpha_n >= 1.1 alpha_r and beta_n >= 1.1 beta_r. Pure and deterministic;
 * with no points it returns the start values (with the same rules applied). `options.gamma`
 * pins gamma to that value (in [1, 10]; used by the network model, network-model.ts); without
 * it the fit is the artifact's.
 */
export function fitPerfParams(points: readonly ProfilePoint[], options: { gamma?: number } = {}): PerfParams {
  const N = points.length;
  const lower = [LOWER, LOWER, LOWER, LOWER, LOWER, LOWER, 1];
  const upper = [Infinity, Infinity, Infinity, Infinity, Infinity, Infinity, 10];
  const x0 = START.slice();
  const pin = (i: number, v: number): void => {
    x0[i] = v;
    lower[i] = v;
    upper[i] = v;
  };

  const bsz = new Float64Array(N);
  const retro = new Float64Array(N);
  const link = new Uint8Array(N);
  const logAcc = new Float64Array(N);
  const logOpt = new Float64Array(N);
  let singleBsz = true;
  let anyMultiNode = false;
  let anyIntraMulti = false;
  let anyOver2 = false;
  let sumAcc = 0;
  for (let i = 0; i < N; i++) {
    const p = points[i] as ProfilePoint;
    bsz[i] = p.local_bsz;
    if (i > 0 && p.local_bsz !== points[0]?.local_bsz) singleBsz = false;
    retro[i] = Math.max(p.num_replicas - 2, 1e-8);
    link[i] = p.num_nodes > 1 ? Link.InterNode : p.num_replicas > 1 ? Link.IntraNode : Link.None;
    anyMultiNode ||= p.num_nodes > 1;
    anyIntraMulti ||= p.num_nodes === 1 && p.num_replicas > 1;
    anyOver2 ||= p.num_replicas > 2;
    logAcc[i] = Math.log(Math.max(p.accum_step_time_s, MIN_TIME_S));
    logOpt[i] = Math.log(Math.max(p.optim_step_time_s, MIN_TIME_S));
    sumAcc += p.accum_step_time_s;
  }
  if (N > 0 && singleBsz) pin(0, sumAcc / N / 2);
  if (!anyMultiNode) {
    pin(2, LOWER);
    pin(3, LOWER);
  }
  if (!anyIntraMulti) {
    pin(4, LOWER);
    pin(5, LOWER);
  }
  if (!anyOver2) {
    pin(3, LOWER);
    pin(5, LOWER);
  }
  if (options.gamma !== undefined) pin(6, Math.min(10, Math.max(1, options.gamma)));

  let x: ArrayLike<number> = x0;
  if (N > 0) {
    const objective = (p: Float64Array, grad: Float64Array): number =>
      lossAndGradient(p, grad, bsz, retro, link, logAcc, logOpt);
    x = minimizeBounded(objective, x0, lower, upper).x;
  }
  const params: PerfParams = {
    alpha_c: x[0] as number,
    beta_c: x[1] as number,
    alpha_n: x[2] as number,
    beta_n: x[3] as number,
    alpha_r: x[4] as number,
    beta_r: x[5] as number,
    gamma: x[6] as number,
  };
  if (!anyMultiNode) {
    params.alpha_n = Math.max(params.alpha_n, params.alpha_r * 1.1);
    params.beta_n = Math.max(params.beta_n, params.beta_r * 1.1);
  }
  return params;
}

/** The fit's loss at `p`; writes its exact gradient into `grad`. */
function lossAndGradient(
  p: Float64Array,
  grad: Float64Array,
  bsz: Float64Array,
  retro: Float64Array,
  link: Uint8Array,
  logAcc: Float64Array,
  logOpt: Float64Array,
): number {
  const [ac, bc, an, bn, ar, br, gamma] = p as unknown as [number, number, number, number, number, number, number];
  const N = bsz.length;
  grad.fill(0);
  let sum1 = 0;
  let sum2 = 0;
  // First pass: residuals, with the per-point terms the gradient pass reuses.
  const cache = scratch(N);
  for (let i = 0; i < N; i++) {
    const b = bsz[i] as number;
    const acc = ac + bc * b;
    const l = link[i] as number;
    const rt = retro[i] as number;
    const net = l === 0 ? an + bn * rt : l === 1 ? ar + br * rt : 1e-8 + 1e-8 * rt;
    const la = Math.log(acc);
    const ln = Math.log(net);
    const u = gamma * la;
    const v = gamma * ln;
    const mx = u > v ? u : v;
    const eu = Math.exp(u - mx);
    const ev = Math.exp(v - mx);
    const sum = eu + ev;
    const y = (mx + Math.log(sum)) / gamma;
    const r1 = la - (logAcc[i] as number);
    const r2 = y - (logOpt[i] as number);
    sum1 += r1 * r1;
    sum2 += r2 * r2;
    const k = i * 8;
    cache[k] = acc;
    cache[k + 1] = net;
    cache[k + 2] = la;
    cache[k + 3] = ln;
    cache[k + 4] = eu / sum;
    cache[k + 5] = ev / sum;
    cache[k + 6] = y;
    cache[k + 7] = r1;
    cache[N * 8 + i] = r2;
  }
  const err1 = Math.sqrt(sum1 / N);
  const err2 = Math.sqrt(sum2 / N);
  const c1 = err1 > 0 ? 1 / (N * err1) : 0;
  const c2 = err2 > 0 ? 1 / (N * err2) : 0;
  let gac = 0;
  let gbc = 0;
  let gan = 0;
  let gbn = 0;
  let gar = 0;
  let gbr = 0;
  let gg = 0;
  for (let i = 0; i < N; i++) {
    const k = i * 8;
    const acc = cache[k] as number;
    const net = cache[k + 1] as number;
    const wa = cache[k + 4] as number;
    const wn = cache[k + 5] as number;
    const r1 = cache[k + 7] as number;
    const r2 = cache[N * 8 + i] as number;
    const dAcc = (c1 * r1 + c2 * r2 * wa) / acc;
    gac += dAcc;
    gbc += dAcc * (bsz[i] as number);
    const l = link[i] as number;
    if (l !== 2) {
      const dNet = (c2 * r2 * wn) / net;
      if (l === 0) {
        gan += dNet;
        gbn += dNet * (retro[i] as number);
      } else {
        gar += dNet;
        gbr += dNet * (retro[i] as number);
      }
    }
    const la = cache[k + 2] as number;
    const ln = cache[k + 3] as number;
    const y = cache[k + 6] as number;
    gg += (c2 * r2 * (wa * la + wn * ln - y)) / gamma;
  }
  const qn = bn / an;
  const qr = br / ar;
  const loss = err1 + err2 + 1e-3 * (gamma - 1) ** 2 + 1e-2 * (qn * qn + qr * qr);
  grad[0] = gac;
  grad[1] = gbc;
  grad[2] = gan - (2e-2 * qn * qn) / an;
  grad[3] = gbn + (2e-2 * qn) / an;
  grad[4] = gar - (2e-2 * qr * qr) / ar;
  grad[5] = gbr + (2e-2 * qr) / ar;
  grad[6] = gg + 2e-3 * (gamma - 1);
  return loss;
}

let scratchBuffer = new Float64Array(0);
/** Reused work buffer (the fit is synchronous, so one buffer per module is safe). */
function scratch(n: number): Float64Array {
  if (scratchBuffer.length < n * 9) scratchBuffer = new Float64Array(n * 9);
  return scratchBuffer;
}
