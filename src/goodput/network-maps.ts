/**
 * Stage 2 of the network model's fit (network-model.ts): the maps from what a job knows on one
 * node (its size proxy, its intra-node sync time, its reported parameter count) to its cross-node
 * bandwidth term N_j, fitted to the N_j that stage 1 (sync-physics.ts) found for the cluster's
 * jobs. Pure and deterministic.
 */
import { minimizeBounded } from './lbfgsb.js';

/**
 * The map from a job's reported parameter count P, its one-node proxy and its one-node intra-node
 * sync time S (on a full node of 4 GPUs) to its bandwidth term:
 *   N = intra_sync_weight x S + sync_per_parameter_s x P + sync_per_proxy_s x proxy.
 * The hypothesis behind S: on several nodes the all-reduce still does what one full node
 * measured (the reduction among the node's GPUs, the wait for its slowest replica), a part of N
 * that the parameter count does not explain (deepspeech2: 2.8 times bert's S with 0.38 times its
 * parameters). bench:predict measured it and the data do not support it, so its weight is 0 by
 * default (network-model.ts INTRA_SYNC_WEIGHT). Invariants: all three >= 0; the last two not
 * both 0.
 */
export interface ParameterMap {
  sync_per_parameter_s: number;
  sync_per_proxy_s: number;
  /** Weight of the job's own intra-node sync time: 0 by default (the two-term map), 1 adds all of it. */
  intra_sync_weight: number;
}

/** Parameter counts are fitted in millions, where the coefficients are of the proxy's order. */
const PARAMETERS_PER_UNIT = 1e6;
/** exp(-30): how a coefficient fitted in logs approaches 0. */
const LOG_FLOOR = -30;
const LOG_CEIL = 10;

/**
 * The {@link ParameterMap} minimizing sum_j (log N_hat_j - log bandwidth_s[j])^2 over the jobs,
 * with a and b >= 0 fitted in log a and log b. `intra_sync_weight` is held at the given value
 * (>= 0), or fitted as a third log coefficient (started at 1) when 'fitted'. All arrays are by job
 * and of the same length (>= 1); parameter counts > 0, proxies and sync times >= 0.
 */
export function fitParameterMap(
  parameters: readonly number[],
  proxies: readonly number[],
  intraSyncs_s: readonly number[],
  bandwidth_s: readonly number[],
  intra_sync_weight: number | 'fitted',
): ParameterMap {
  const x = parameters.map((p) => p / PARAMETERS_PER_UNIT);
  const fitted = intra_sync_weight === 'fitted';
  const objective = (v: Float64Array, grad: Float64Array): number => {
    const a = Math.exp(v[0] as number);
    const b = Math.exp(v[1] as number);
    const w = fitted ? Math.exp(v[2] as number) : intra_sync_weight;
    grad.fill(0);
    let loss = 0;
    for (let j = 0; j < x.length; j++) {
      const s = intraSyncs_s[j] as number;
      const predicted = w * s + a * (x[j] as number) + b * (proxies[j] as number);
      const r = Math.log(predicted) - Math.log(bandwidth_s[j] as number);
      loss += r * r;
      grad[0] = (grad[0] as number) + (2 * r * a * (x[j] as number)) / predicted;
      grad[1] = (grad[1] as number) + (2 * r * b * (proxies[j] as number)) / predicted;
      if (fitted) grad[2] = (grad[2] as number) + (2 * r * w * s) / predicted;
    }
    return loss;
  };
  const start = [Math.log(1e-2), 0, ...(fitted ? [0] : [])];
  const v = minimizeBounded(
    objective,
    start,
    start.map(() => LOG_FLOOR),
    start.map(() => LOG_CEIL),
  ).x;
  return {
    sync_per_parameter_s: Math.exp(v[0] as number) / PARAMETERS_PER_UNIT,
    sync_per_proxy_s: Math.exp(v[1] as number),
    intra_sync_weight: fitted ? Math.exp(v[2] as number) : intra_sync_weight,
  };
}

/** The bandwidth term (s) of a job under `map`: see {@link ParameterMap}. */
export function parameterMapTerm_s(
  map: ParameterMap,
  model_parameters: number,
  proxy_value: number,
  intra_sync_s: number,
): number {
  return (
    map.intra_sync_weight * intra_sync_s +
    map.sync_per_parameter_s * model_parameters +
    map.sync_per_proxy_s * proxy_value
  );
}

const MIN_EXPONENT = 0.25;
const MAX_EXPONENT = 3;

/**
 * bandwidth = scale x proxy^exponent over the jobs, in logs: `ratio`, exponent 1 and scale the
 * geometric mean of bandwidth / proxy; `power`, both by least squares (exponent clamped to
 * [0.25, 3]; 1 when the proxies do not vary). Proxies and bandwidths > 0, at least one job.
 */
export function fitProxyMap(
  proxies: readonly number[],
  bandwidth_s: readonly number[],
  mapping: 'ratio' | 'power',
): { scale: number; exponent: number } {
  const J = proxies.length;
  const lx = proxies.map((p) => Math.log(p));
  const ly = bandwidth_s.map((b) => Math.log(b));
  const mx = lx.reduce((s, v) => s + v, 0) / J;
  const my = ly.reduce((s, v) => s + v, 0) / J;
  let sxx = 0;
  let sxy = 0;
  for (let j = 0; j < J; j++) {
    sxx += ((lx[j] as number) - mx) ** 2;
    sxy += ((lx[j] as number) - mx) * ((ly[j] as number) - my);
  }
  const exponent = mapping === 'power' && sxx > 1e-12 ? Math.min(MAX_EXPONENT, Math.max(MIN_EXPONENT, sxy / sxx)) : 1;
  return { scale: Math.exp(my - exponent * mx), exponent };
}
