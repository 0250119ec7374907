/**
 * Stage 1 of the network model's fit (network-model.ts): what the multi-node points of several
 * jobs say about the cluster's network, without any one-node information. Pure.
 */
import { minimizeBounded } from './lbfgsb.js';
import type { ProfilePoint } from './types.js';

/** Result of {@link fitSyncPhysics}. Invariants: bandwidth_s[j] > 0, latency >= 0, gamma in [1, 10]. */
export interface SyncPhysics {
  /** Each job's cross-node sync time at 2 replicas, its bandwidth term N_j (s), by job index. */
  bandwidth_s: number[];
  /** Sync time added by each replica beyond 2, shared by all jobs (s). */
  latency_per_replica_s: number;
  /** Overlap exponent shared by all jobs. */
  gamma: number;
}

const MIN_TIME_S = 1e-12;
const MIN_SYNC_S = 1e-6;
const GAMMA_START = 2;
const LATENCY_START_S = 1e-3;

/**
 * Fits, to the multi-node points of each job (`jobs[j]`, at least one point each), the model
 * t_opt = (t_acc^gamma + t_net^gamma)^(1/gamma) with t_net = N_j + latency x max(r - 2, 0) and the
 * point's measured t_acc (accum_step_time_s): one N_j per job, one latency and one gamma for the
 * cluster. Minimizes the mean over jobs of each job's mean squared error of log t_opt (every
 * job weighs the same, however many points it reported). Deterministic.
 */
export function fitSyncPhysics(jobs: readonly (readonly ProfilePoint[])[]): SyncPhysics {
  const J = jobs.length;
  const job: number[] = [];
  const retro: number[] = [];
  const logAcc: number[] = [];
  const logOpt: number[] = [];
  const weight: number[] = [];
  const x0: number[] = [GAMMA_START, LATENCY_START_S];
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
    const latency = x[1] as number;
    let loss = 0;
    for (let i = 0; i < N; i++) {
      const j = job[i] as number;
      const bandwidth = Math.exp(x[2 + j] as number);
      const net = bandwidth + latency * (retro[i] as number);
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
      grad[1] = (grad[1] as number) + dNet * (retro[i] as number);
      grad[2 + j] = (grad[2 + j] as number) + dNet * bandwidth;
    }
    return loss;
  };
  const lower = [1, 0, ...Array.from({ length: J }, () => Math.log(MIN_SYNC_S))];
  const upper = [10, 1, ...Array.from({ length: J }, () => Math.log(1e4))];
  const x = minimizeBounded(objective, x0, lower, upper).x;
  return {
    gamma: x[0] as number,
    latency_per_replica_s: x[1] as number,
    bandwidth_s: Array.from({ length: J }, (_, j) => Math.exp(x[2 + j] as number)),
  };
}
