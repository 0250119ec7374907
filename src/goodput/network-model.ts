/**
 * A cluster-wide model of cross-node gradient synchronization, for predicting the multi-node
 * step time of a job that has been measured on at most one node (issue #18).
 *
 * Why: a job's own fit (fit.ts) has no inter-node data until it has run on several nodes, so it
 * extrapolates its intra-node parameters (alpha_n >= 1.1 alpha_r). Intra-node sync says little
 * about the network: cifar10 fitted on 4 GPUs predicts 3.7x on 64 GPUs where the trace says 0.6x.
 * Jobs that did run on several nodes, though, all crossed the same network. Ring all-reduce
 * moves about 2 (r-1)/r x gradient bytes through each node's link, almost independent of the node
 * count, so a job's cross-node sync time is its gradient size over the cluster's bandwidth plus
 * a latency. The gradient size is unknown, but one-node measurements carry a proxy of the model
 * size (see {@link SizeProxy}); the cluster's reports fix the map from proxy to sync time.
 *
 * The model, for job j on n > 1 nodes with r replicas (times in seconds):
 *   t_net(j, r) = (offset_s + per_proxy x proxy_j) x (1 + per_replica x max(r - 2, 0))
 *   t_opt       = (t_acc^gamma + t_net^gamma)^(1/gamma)           (pollux-spec §3.1 overlap)
 * which is exactly PerfParams' inter-node form: alpha_n = offset_s + per_proxy x proxy_j,
 * beta_n = per_replica x alpha_n. The cluster parameters (offset_s, per_proxy, per_replica,
 * gamma) are fitted to every multi-node point that the cluster's jobs reported, each job
 * weighted equally, with the job's proxy taken from its own points on at most one node.
 *
 * Pure and deterministic: no I/O, no clock, no randomness.
 */
import { fitPerfParams } from './fit.js';
import { minimizeBounded } from './lbfgsb.js';
import { logOverlap } from './throughput.js';
import type { PerfParams, ProfilePoint } from './types.js';

/**
 * Which one-node quantity stands for a job's gradient size:
 * - `fixed_compute`: alpha_c of the job's one-node fit, the batch-independent part of a
 *   micro-step (weight update, per-layer kernel launches), which grows with the parameter count;
 * - `intra_sync`: the fit's intra-node sync time on 4 GPUs, alpha_r + 2 beta_r (what overlap
 *   left visible of an all-reduce over NVLink/PCIe);
 * - `constant`: 1 for every job (one sync time for the whole cluster).
 */
export type SizeProxy = 'fixed_compute' | 'intra_sync' | 'constant';

/** Options of {@link fitNetworkModel}. */
export interface NetworkModelOptions {
  /** Default `fixed_compute`. */
  proxy?: SizeProxy;
}

/**
 * Cluster network parameters fitted by {@link fitNetworkModel}.
 * Invariants: offset_s >= 0, per_proxy >= 0, offset_s + per_proxy > 0, per_replica >= 0,
 * gamma in [1, 10]; num_jobs >= 1.
 */
export interface NetworkParams {
  proxy: SizeProxy;
  /** Sync time independent of the job (s): latency of the collective. */
  offset_s: number;
  /** Sync time per unit of the job's size proxy (s per proxy unit; s/s for time proxies). */
  per_proxy: number;
  /** Relative growth of the sync time per replica beyond 2. */
  per_replica: number;
  /** Compute/communication overlap exponent on several nodes (pollux-spec §3.1). */
  gamma: number;
  /** Jobs whose multi-node points were fitted. */
  num_jobs: number;
  /** Multi-node points fitted. */
  num_points: number;
}

const MIN_PARAM = 1e-8;
const MIN_TIME_S = 1e-12;

/** The points on at most one node (what a job knows before it spans several). */
export function oneNodePoints(points: readonly ProfilePoint[]): ProfilePoint[] {
  return points.filter((p) => p.num_nodes <= 1);
}

/**
 * The size proxy of a job from its PerfParams fitted on at most one node (see {@link SizeProxy}).
 * Always > 0 (floored at 1e-8).
 */
export function sizeProxy(perf: PerfParams, proxy: SizeProxy): number {
  if (proxy === 'constant') return 1;
  const value = proxy === 'fixed_compute' ? perf.alpha_c : perf.alpha_r + 2 * perf.beta_r;
  return Math.max(value, MIN_PARAM);
}

/**
 * Predicted cross-node sync time (s) of a job with size proxy `proxy_value` on several nodes
 * with `num_replicas` replicas: (offset_s + per_proxy x proxy) (1 + per_replica max(r - 2, 0)).
 * Positive, non-decreasing in the replicas and in the proxy.
 */
export function crossNodeSyncTime_s(net: NetworkParams, proxy_value: number, num_replicas: number): number {
  const base = Math.max(net.offset_s + net.per_proxy * proxy_value, MIN_PARAM);
  return base * (1 + net.per_replica * Math.max(num_replicas - 2, 0));
}

/**
 * A job's PerfParams with the inter-node terms predicted by the cluster network model:
 * alpha_n and beta_n from {@link crossNodeSyncTime_s} and gamma from the cluster. `perf` should be
 * the job's fit on its points on at most one node; its compute and intra-node terms are kept.
 * Returns `perf` itself when `net` is undefined (no cluster data: today's behaviour).
 *
 * Replacing gamma also changes the predicted one-node optim step (r > 1), where the job's own
 * gamma had been fitted; callers that have multi-node points of the job should keep its own fit
 * (see {@link predictPerfParams}).
 */
export function withNetworkModel(perf: PerfParams, net: NetworkParams | undefined): PerfParams {
  if (!net) return perf;
  const alpha_n = crossNodeSyncTime_s(net, sizeProxy(perf, net.proxy), 2);
  return {
    ...perf,
    alpha_n,
    beta_n: Math.max(alpha_n * net.per_replica, MIN_PARAM),
    gamma: net.gamma,
  };
}

/**
 * The PerfParams a consumer should use for a job with profile `points`: its own fit when it has
 * run on several nodes (or when there is no network model), else its one-node fit with the
 * inter-node terms of the network model. Pure; `fit` defaults to fitPerfParams.
 */
export function predictPerfParams(
  points: readonly ProfilePoint[],
  net: NetworkParams | undefined,
  fit: (points: readonly ProfilePoint[]) => PerfParams = fitPerfParams,
): PerfParams {
  const own = fit(points);
  if (!net || points.some((p) => p.num_nodes > 1)) return own;
  return withNetworkModel(own, net);
}

interface FitRow {
  job: number;
  proxy: number;
  retro: number;
  logAcc: number;
  logOpt: number;
}

/**
 * Fits the cluster network parameters to the multi-node points of `jobs` (each job's points on
 * at most one node give its size proxy; jobs without any are skipped). Minimizes the mean over
 * jobs of the mean squared error of log t_opt over the job's multi-node points, where t_opt
 * overlaps the point's own measured accum time with the predicted sync time. Returns undefined
 * when no job has both one-node and multi-node points (callers keep today's behaviour).
 * Pure and deterministic; `fit` defaults to fitPerfParams.
 */
export function fitNetworkModel(
  jobs: readonly { readonly points: readonly ProfilePoint[] }[],
  options: NetworkModelOptions = {},
  fit: (points: readonly ProfilePoint[]) => PerfParams = fitPerfParams,
): NetworkParams | undefined {
  const proxyKind = options.proxy ?? 'fixed_compute';
  const rows: FitRow[] = [];
  const perJob: number[] = [];
  for (const job of jobs) {
    const multi = job.points.filter((p) => p.num_nodes > 1);
    const single = oneNodePoints(job.points);
    if (multi.length === 0 || single.length === 0) continue;
    const proxy = sizeProxy(fit(single), proxyKind);
    const index = perJob.length;
    perJob.push(multi.length);
    for (const p of multi) {
      rows.push({
        job: index,
        proxy,
        retro: Math.max(p.num_replicas - 2, 0),
        logAcc: Math.log(Math.max(p.accum_step_time_s, MIN_TIME_S)),
        logOpt: Math.log(Math.max(p.optim_step_time_s, MIN_TIME_S)),
      });
    }
  }
  if (rows.length === 0) return undefined;
  const weights = rows.map((row) => 1 / ((perJob[row.job] as number) * perJob.length));
  // Parameters: log offset, log per_proxy, per_replica, gamma. Logs keep the scales positive and
  // comparable; the constant proxy has no separate offset.
  const loss = (x: ArrayLike<number>): number => {
    const offset = proxyKind === 'constant' ? 0 : Math.exp(x[0] as number);
    const perProxy = Math.exp(x[1] as number);
    const perReplica = x[2] as number;
    const gamma = x[3] as number;
    let total = 0;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as FitRow;
      const net = (offset + perProxy * row.proxy) * (1 + perReplica * row.retro);
      const residual = logOverlap(Math.exp(row.logAcc), Math.max(net, MIN_PARAM), gamma) - row.logOpt;
      total += (weights[i] as number) * residual * residual;
    }
    return total;
  };
  const objective = (x: Float64Array, grad: Float64Array): number => {
    const f = loss(x);
    const probe = Float64Array.from(x);
    for (let k = 0; k < x.length; k++) {
      const h = 1e-6 * Math.max(1, Math.abs(x[k] as number));
      probe[k] = (x[k] as number) + h;
      const up = loss(probe);
      probe[k] = (x[k] as number) - h;
      const down = loss(probe);
      probe[k] = x[k] as number;
      grad[k] = (up - down) / (2 * h);
    }
    return f;
  };
  const meanProxy = rows.reduce((s, r) => s + r.proxy, 0) / rows.length;
  const meanSync = rows.reduce((s, r) => s + Math.max(Math.exp(r.logOpt) - Math.exp(r.logAcc), 1e-6), 0) / rows.length;
  const x0 = [Math.log(meanSync / 2), Math.log(meanSync / meanProxy / 2), 0.001, 1.5];
  const lower = [Math.log(1e-9), Math.log(1e-9), 0, 1];
  const upper = [Math.log(1e3), Math.log(1e6), 1, 10];
  if (proxyKind === 'constant') {
    lower[0] = x0[0] as number;
    upper[0] = x0[0] as number;
  }
  const x = minimizeBounded(objective, x0, lower, upper).x;
  return {
    proxy: proxyKind,
    offset_s: proxyKind === 'constant' ? 0 : Math.exp(x[0] as number),
    per_proxy: Math.exp(x[1] as number),
    per_replica: x[2] as number,
    gamma: x[3] as number,
    num_jobs: perJob.length,
    num_points: rows.length,
  };
}
