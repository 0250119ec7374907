/**
 * Stage 1 of the network model's fit (network-model.ts): what the multi-node points of several
 * jobs say about the cluster's network, without any one-node information. Pure.
 */
import { minimizeBounded } from './lbfgsb.js';
import type { ProfilePoint } from './types.js';

/**
 * How the cross-node sync time grows with the replicas beyond 2:
 * - `latency`: by the same time per replica for every job, t_net = N_j + latency x (r - 2)
 *   (a per-hop latency);
 * - `proportional`: by the same fraction of each job's bandwidth term per replica,
 *   t_net = N_j x (1 + growth x (r - 2)) (the cost of more hops grows with what each carries).
 */
export type SyncGrowth = 'latency' | 'proportional';

/**
 * Result of {@link fitSyncPhysics}. Invariants: bandwidth_s[j] > 0, latency >= 0, growth >= 0
 * (at most one of them non-zero: the one of the fitted {@link SyncGrowth}), gamma in [1, 10].
 */
export interface SyncPhysics {
  /** Each job's cross-node sync time at 2 replicas, its bandwidth term N_j (s), by job index. */
  bandwidth_s: number[];
  /** Sync time added by each replica beyond 2, shared by all jobs (s); 0 under `proportional`. */
  latency_per_replica_s: number;
  /** Fraction of N_j added by each replica beyond 2, shared by all jobs; 0 under `latency`. */
  growth_per_replica: number;
  /** Overlap exponent shared by all jobs. */
  gamma: number;
}

const MIN_TIME_S = 1e-12;
const MIN_SYNC_S = 1e-6;
const GAMMA_START = 2;
const LATENCY_START_S = 1e-3;
const GROWTH_START = 1e-2;

/**
 * Fits, to the multi-node points of each job (`jobs[j]`, at least one point each), the model
 * t_opt = (t_acc^gamma + t_net^gamma)^(1/gamma) with t_net as `growth` says (default
 * `latency`: N_j + latency x max(r - 2, 0)) and the point's measured t_acc (accum_step_time_s):
 * one N_j per job, one latency (or growth) and one gamma for the cluster. Minimizes the mean over
 * jobs of each job's mean squared error of log t_opt (every job weighs the same, however many
 * points it reported). Deterministic.
 */
export function fitSyncPhysics(
  jobs: readonly (readonly ProfilePoint[])[],
  growth: SyncGrowth = 'latency',
): SyncPhysics {
  const proportional = growth === 'proportional';
  const J = jobs.length;
  const job: number[] = [];
  const retro: number[] = [];
  const logAcc: number[] = [];
  const logOpt: number[] = [];
  const weight: number[] = [];
  const x0: number[] = [GAMMA_START, proportional ? GROWTH_START : LATENCY_START_S];
  for (let j = 0; j < J; j++) {
    const points = jobs[j] as readonly ProfilePoint[];
    const syncs: number[] = [];
    for (const p of points) {
      job.push(j);
      retro.push(Math.max(p.num_replicas - 2, 0));
      logAcc.push(Math.log(Math.max(p.accum_step_time_s, MIN_TIME_S)));
      logOpt.push(Math.log(Math.max(p.optim_step_time_s, MIN_TIME_S)));
      weight.push(1 / (points.length * J));
      syncs.push(Math.max(p.optim_step_time_s - p.accum_step_time_s, MIN_SYNC_S));
    }
    syncs.sort((a, b) => a - b);
    x0.push(Math.log(syncs[syncs.length >> 1] ?? MIN_SYNC_S));
  }
  const N = job.length;
  const objective = (x: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    const gamma = x[0] as number;
    // x[1]: the latency (s per replica) or, proportional, the growth (fraction per replica).
    const perReplica = x[1] as number;
    let loss = 0;
    for (let i = 0; i < N; i++) {
      const j = job[i] as number;
      const bandwidth = Math.exp(x[2 + j] as number);
      const rr = retro[i] as number;
      const net = proportional ? bandwidth * (1 + perReplica * rr) : bandwidth + perReplica * rr;
      const la = logAcc[i] as number;
      const ln = Math.log(net);
      const u = gamma * la;
      const v = gamma * ln;
      const m = u > v ? u : v;
      const eu = Math.exp(u - m);
      const ev = Math.exp(v - m);
      const wa = eu / (eu + ev);
      const wn = ev / (eu + ev);
      const y = (m + Math.log(eu + ev)) / gamma;
      const r = y - (logOpt[i] as number);
      const w = weight[i] as number;
      loss += w * r * r;
      const dy = 2 * w * r;
      const dNet = (dy * wn) / net;
      grad[0] = (grad[0] as number) + (dy * (wa * la + wn * ln - y)) / gamma;
      grad[1] = (grad[1] as number) + dNet * (proportional ? bandwidth * rr : rr);
      grad[2 + j] = (grad[2 + j] as number) + dNet * (proportional ? net : bandwidth);
    }
    return loss;
  };
  const lower = [1, 0, ...Array.from({ length: J }, () => Math.log(MIN_SYNC_S))];
  const upper = [10, 1, ...Array.from({ length: J }, () => Math.log(1e4))];
  const x = minimizeBounded(objective, x0, lower, upper).x;
  return {
    gamma: x[0] as number,
    latency_per_replica_s: proportional ? 0 : (x[1] as number),
    growth_per_replica: proportional ? (x[1] as number) : 0,
    bandwidth_s: Array.from({ length: J }, (_, j) => Math.exp(x[2 + j] as number)),
  };
}
