/**
 * A cluster-wide model of cross-node gradient synchronization, for predicting the multi-node
 * step time of a job that has been measured on at most one node, so that it need not run on
 * several nodes before the policy can size it across them.
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
 *   N_j         = sync_per_proxy x proxy_j^proxy_exponent, or, when jobs report their parameter
 *                 count P_j (the gradient's size), N_j = sync_per_parameter_s x P_j +
 *                 sync_per_proxy_s x proxy_j (bytes over bandwidth plus a per-step cost; an
 *                 option adds the job's own intra-node sync time, network-maps.ts ParameterMap)
 *   t_net(j, r) = N_j + (latency_per_replica_s + growth_per_replica x N_j) x max(r - 2, 0)
 *   t_opt       = (t_acc^gamma + t_net^gamma)^(1/gamma)           (pollux-spec §3.1 overlap)
 * (one of latency and growth is fitted, the other is 0: NetworkModelOptions.growth), which is
 * exactly PerfParams' inter-node form: alpha_n = N_j, beta_n = latency + growth x N_j, gamma the
 * cluster's. The cluster parameters are fitted to the multi-node points the cluster's jobs
 * reported, each job weighted equally (fitNetworkModel), with each job's proxy taken from its own
 * points on at most one node.
 *
 * Use: `net = fitNetworkModel(all jobs' profiles)` when profiles change, then
 * `predictPerfParams(job points, net)` wherever fitPerfParams(job points) was used. Measured
 * against the traces by `npm run bench:predict` (docs/policy.md, "Predicting sizes not yet run").
 *
 * Pure and deterministic: no I/O, no clock, no randomness.
 */
import { fitPerfParams } from './fit.js';
import { fitParameterMap, fitProxyMap, parameterMapTerm_s, type ParameterMap } from './network-maps.js';
import { fitSyncPhysics, type SyncGrowth } from './sync-physics.js';
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
  /**
   * How the bandwidth term follows the proxy: `ratio` (default), N = k x proxy (sync time
   * proportional to the model size); `power`, N = k x proxy^p with p fitted (log-log least
   * squares over the jobs, clamped to [0.25, 3]; `ratio` when fewer than 2 distinct proxies).
   */
  mapping?: 'ratio' | 'power';
  /**
   * How the sync time grows with the replicas (sync-physics.ts SyncGrowth); default
   * `proportional` when the parameter map is fitted, else `latency` (each measured best by
   * bench:predict, docs/policy.md).
   */
  growth?: SyncGrowth;
  /**
   * With parameter counts: the weight of each job's own intra-node sync time in its bandwidth
   * term (ParameterMap.intra_sync_weight), >= 0, or 'fitted' over the jobs. Default
   * {@link INTRA_SYNC_WEIGHT}.
   */
  intra_sync_weight?: number | 'fitted';
}

/**
 * Default {@link NetworkModelOptions.intra_sync_weight}: 0, the two-term map. Weight 1 brings
 * every application of bench:predict under 15%, but by cancelling errors rather than by fitting
 * the data (fitted, the weight is 0 without deepspeech2; as a fixed part of the multi-node
 * physics it wrecks the fit; errors on 12-16 nodes double): measured by bench:predict
 * (docs/policy.md).
 */
export const INTRA_SYNC_WEIGHT = 0;

/**
 * `model_parameters` when it is a parameter count (> 0), else undefined: how reports, profiles and
 * the model read an optional count.
 */
export function knownParameterCount(model_parameters: number | undefined): number | undefined {
  return model_parameters !== undefined && model_parameters > 0 ? model_parameters : undefined;
}

/** A job as the network model sees it: its profile points and, if it reported it, its parameter count. */
export interface NetworkJob {
  readonly points: readonly ProfilePoint[];
  /** Parameters of the job's model (what its gradient all-reduce moves), when reported; > 0. */
  readonly model_parameters?: number | undefined;
}

export type { ParameterMap } from './network-maps.js';

/**
 * Cluster network parameters fitted by {@link fitNetworkModel}.
 * Invariants: sync_per_proxy > 0, latency_per_replica_s >= 0, growth_per_replica >= 0, gamma in
 * [1, 10], num_jobs >= 1.
 */
export interface NetworkParams {
  proxy: SizeProxy;
  /** Bandwidth part of the cross-node sync time: sync_per_proxy x proxy^proxy_exponent (s). */
  sync_per_proxy: number;
  /** 1 for the `ratio` mapping. */
  proxy_exponent: number;
  /**
   * Fitted when at least MIN_PARAMETER_JOBS of the fitted jobs reported their parameter count:
   * the bandwidth term of a job that reported its own (the proxy map serves the others).
   */
  parameter_map?: ParameterMap;
  /** Latency part: sync time added by each replica beyond 2, the same for every job (s). */
  latency_per_replica_s: number;
  /**
   * Growth part: fraction of the job's bandwidth term added by each replica beyond 2 (0 unless
   * fitted with growth `proportional`).
   */
  growth_per_replica: number;
  /** Compute/communication overlap exponent on several nodes (pollux-spec §3.1). */
  gamma: number;
  /** Jobs whose multi-node points were fitted. */
  num_jobs: number;
  /** Multi-node points fitted. */
  num_points: number;
}

const MIN_PARAM = 1e-8;

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
  const value = proxy === 'fixed_compute' ? perf.alpha_c : intraSyncTime_s(perf);
  return Math.max(value, MIN_PARAM);
}

/**
 * Predicted cross-node sync time (s) on several nodes with `num_replicas` replicas of a job whose
 * fit on at most one node is `perf`: N + (latency_per_replica_s + growth_per_replica x N) x
 * max(r - 2, 0), with N the bandwidth term of a ring all-reduce (about constant in r; from the
 * job's proxy, and with `model_parameters` from the parameter map) plus what each further hop
 * adds. Positive; non-decreasing in the replicas, the proxy and the job's intra-node sync time.
 */
export function crossNodeSyncTime_s(
  net: NetworkParams,
  perf: PerfParams,
  num_replicas: number,
  model_parameters?: number,
): number {
  const bandwidth = bandwidthTerm_s(net, perf, model_parameters);
  return bandwidth + perReplicaTerm_s(net, bandwidth) * Math.max(num_replicas - 2, 0);
}

function perReplicaTerm_s(net: NetworkParams, bandwidth_s: number): number {
  return net.latency_per_replica_s + net.growth_per_replica * bandwidth_s;
}

/** N of a job whose one-node fit is `perf`: the parameter map's when it has one and a count, else the proxy map's. */
function bandwidthTerm_s(net: NetworkParams, perf: PerfParams, model_parameters: number | undefined): number {
  const map = net.parameter_map;
  const count = knownParameterCount(model_parameters);
  const proxy = sizeProxy(perf, net.proxy);
  if (map && count !== undefined)
    return Math.max(parameterMapTerm_s(map, count, proxy, intraSyncTime_s(perf)), MIN_PARAM);
  return Math.max(net.sync_per_proxy * proxy ** net.proxy_exponent, MIN_PARAM);
}

/**
 * A job's intra-node sync time on a full node of 4 GPUs, alpha_r + 2 beta_r of its one-node fit
 * (before overlap; ~0 when it never ran on several GPUs, whose alpha_r and beta_r the fit pins).
 */
function intraSyncTime_s(perf: PerfParams): number {
  return perf.alpha_r + 2 * perf.beta_r;
}

/**
 * A job's PerfParams with the inter-node terms predicted by the cluster network model:
 * alpha_n = the bandwidth term N (the parameter map's with `model_parameters`, else
 * sync_per_proxy x proxy^proxy_exponent), beta_n = latency_per_replica_s +
 * growth_per_replica x alpha_n (so that networkTime_s() = {@link crossNodeSyncTime_s} on several
 * nodes), gamma from the cluster. `perf` should be the job's fit on its points on at most one
 * node (the proxy and the intra-node sync time are read from it); its compute and intra-node
 * terms are kept. Returns `perf` itself when `net` is undefined (no cluster data: today's
 * behaviour).
 *
 * Replacing gamma also changes the predicted one-node optim step (r > 1), where the job's own
 * gamma had been fitted; callers that have multi-node points of the job should keep its own fit
 * (see {@link predictPerfParams}).
 */
export function withNetworkModel(
  perf: PerfParams,
  net: NetworkParams | undefined,
  model_parameters?: number,
): PerfParams {
  if (!net) return perf;
  const alpha_n = bandwidthTerm_s(net, perf, model_parameters);
  return { ...perf, alpha_n, beta_n: Math.max(perReplicaTerm_s(net, alpha_n), MIN_PARAM), gamma: net.gamma };
}

/**
 * The PerfParams a consumer should use for a job with profile `points` (the integration point):
 * - its own fit (fitPerfParams) when it has run on several nodes or when `net` is undefined
 *   (today's behaviour);
 * - else the fit of its points with gamma pinned to the cluster's, so that its one-node
 *   predictions stay fitted under the overlap the network model assumes, with the inter-node
 *   terms of {@link withNetworkModel} (the proxy and the intra-node sync time from its unpinned
 *   fit, as in fitNetworkModel; the job's `model_parameters` when it reported them).
 * Pure and deterministic.
 */
export function predictPerfParams(
  points: readonly ProfilePoint[],
  net: NetworkParams | undefined,
  model_parameters?: number,
): PerfParams {
  const own = fitPerfParams(points);
  if (!net || points.some((p) => p.num_nodes > 1)) return own;
  const predicted = withNetworkModel(own, net, model_parameters);
  const pinned = fitPerfParams(points, { gamma: net.gamma });
  return { ...pinned, alpha_n: predicted.alpha_n, beta_n: predicted.beta_n, gamma: net.gamma };
}

/**
 * Fits the cluster network parameters to the multi-node points of `jobs`, in two stages.
 * 1. The physics, from the multi-node points alone: each job's own bandwidth term N_j, one
 *    latency per replica and one overlap gamma, minimizing the mean over jobs of the mean squared
 *    error of log t_opt, where t_opt overlaps each point's measured accum time with
 *    N_j + latency x (r - 2).
 * 2. The map from one-node measurements to N_j (each job's proxy from the fit of its points on
 *    at most one node; network-maps.ts): `ratio`, sync_per_proxy = geometric mean over jobs of
 *    N_j / proxy_j; `power`, log N_j = log sync_per_proxy + p log proxy_j by least squares. And,
 *    when at least MIN_PARAMETER_JOBS jobs reported their parameter count, the map N_j = w S_j +
 *    a P_j + b proxy_j over those jobs (S_j the job's one-node intra-node sync time, w the option
 *    intra_sync_weight; a, b >= 0, least squares in logs; {@link ParameterMap}).
 * Jobs with no multi-node point or no one-node point are skipped. Returns undefined when none is
 * left (callers keep today's behaviour). Pure and deterministic; `fit` defaults to fitPerfParams.
 */
export function fitNetworkModel(
  jobs: readonly NetworkJob[],
  options: NetworkModelOptions = {},
  fit: (points: readonly ProfilePoint[]) => PerfParams = fitPerfParams,
): NetworkParams | undefined {
  const proxyKind = options.proxy ?? 'fixed_compute';
  const proxies: number[] = [];
  const intraSyncs: number[] = [];
  const parameters: (number | undefined)[] = [];
  const multi: ProfilePoint[][] = [];
  for (const job of jobs) {
    const many = job.points.filter((p) => p.num_nodes > 1);
    const single = oneNodePoints(job.points);
    if (many.length === 0 || single.length === 0) continue;
    const perf = fit(single);
    proxies.push(sizeProxy(perf, proxyKind));
    intraSyncs.push(intraSyncTime_s(perf));
    parameters.push(knownParameterCount(job.model_parameters));
    multi.push(many);
  }
  if (multi.length === 0) return undefined;
  const reported = parameters.flatMap((p, j) => (p === undefined ? [] : [j]));
  const withParameters = reported.length >= MIN_PARAMETER_JOBS;
  const physics = fitSyncPhysics(multi, options.growth ?? (withParameters ? 'proportional' : 'latency'));
  const map = fitProxyMap(proxies, physics.bandwidth_s, options.mapping ?? 'ratio');
  const weight = options.intra_sync_weight ?? INTRA_SYNC_WEIGHT;
  const pick = (xs: readonly (number | undefined)[]): number[] => reported.map((j) => xs[j] as number);
  return {
    proxy: proxyKind,
    sync_per_proxy: map.scale,
    proxy_exponent: map.exponent,
    ...(withParameters
      ? {
          parameter_map: fitParameterMap(
            pick(parameters),
            pick(proxies),
            pick(intraSyncs),
            pick(physics.bandwidth_s),
            weight,
          ),
        }
      : {}),
    latency_per_replica_s: physics.latency_per_replica_s,
    growth_per_replica: physics.growth_per_replica,
    gamma: physics.gamma,
    num_jobs: multi.length,
    num_points: multi.reduce((s, m) => s + m.length, 0),
  };
}

/** Jobs with a reported parameter count needed to fit the parameter map (two unknowns, a and b). */
const MIN_PARAMETER_JOBS = 2;
