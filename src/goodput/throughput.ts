/**
 * The throughput model of pollux-spec §3.1: compute time linear in the per-GPU batch, network
 * time from the most significant link (inter-node, else intra-node), and their overlap as a
 * gamma-norm. Pure functions of the seven PerfParams.
 */
import type { PerfParams } from './types.js';

/** Time of one accumulation micro-step (s): t_acc = alpha_c + beta_c * b. */
export function accumStepTime_s(perf: PerfParams, local_bsz: number): number {
  return perf.alpha_c + perf.beta_c * local_bsz;
}

/**
 * Gradient synchronization time (s). Inter-node parameters when the job spans more than one
 * node, intra-node ones when it has several replicas on one node, and (as the artifact does)
 * 1e-8 + 1e-8 * 1e-8 for a single replica, i.e. effectively no network time.
 */
export function networkTime_s(perf: PerfParams, num_nodes: number, num_replicas: number): number {
  const retro = Math.max(num_replicas - 2, 1e-8);
  if (num_nodes > 1) return perf.alpha_n + perf.beta_n * retro;
  if (num_replicas > 1) return perf.alpha_r + perf.beta_r * retro;
  return 1e-8 + 1e-8 * retro;
}

/**
 * Log of the optimizer-step time, log((t_acc^g + t_net^g)^(1/g)), computed with a log-sum-exp
 * so that large gamma never underflows.
 */
export function logOverlap(accum_s: number, network_s: number, gamma: number): number {
  const u = gamma * Math.log(accum_s);
  const v = gamma * Math.log(network_s);
  const m = u > v ? u : v;
  return (m + Math.log(Math.exp(u - m) + Math.exp(v - m))) / gamma;
}

/** Time of the last micro-step plus synchronization (s): (t_acc^g + t_net^g)^(1/g). */
export function optimStepTime_s(perf: PerfParams, num_nodes: number, num_replicas: number, local_bsz: number): number {
  const acc = accumStepTime_s(perf, local_bsz);
  const net = networkTime_s(perf, num_nodes, num_replicas);
  return Math.exp(logOverlap(acc, net, perf.gamma));
}

/** Time of one optimizer step with `accum_steps` extra micro-steps (s): a * t_acc + t_opt. */
export function stepTime_s(
  perf: PerfParams,
  num_nodes: number,
  num_replicas: number,
  local_bsz: number,
  accum_steps: number,
): number {
  return accum_steps * accumStepTime_s(perf, local_bsz) + optimStepTime_s(perf, num_nodes, num_replicas, local_bsz);
}

/**
 * Samples per second of optimizer steps of `accum_steps` extra micro-steps of `accum_s` each and a
 * last one (with the synchronization) of `optim_s`: r * b * (a + 1) / (a * t_acc + t_opt). The one
 * form of {@link throughput}, of the corrected one (step-correction.ts) and of the batch
 * optimizer's table (optimize.ts, which reuses step times across candidates).
 */
export function samplesPerSecond(
  num_replicas: number,
  local_bsz: number,
  accum_steps: number,
  accum_s: number,
  optim_s: number,
): number {
  return (num_replicas * local_bsz * (accum_steps + 1)) / (accum_steps * accum_s + optim_s);
}

/** Samples per second: r * b * (a + 1) / T(n, r, b, a). */
export function throughput(
  perf: PerfParams,
  num_nodes: number,
  num_replicas: number,
  local_bsz: number,
  accum_steps: number,
): number {
  const accum_s = accumStepTime_s(perf, local_bsz);
  return samplesPerSecond(
    num_replicas,
    local_bsz,
    accum_steps,
    accum_s,
    optimStepTime_s(perf, num_nodes, num_replicas, local_bsz),
  );
}
