import type { SimResult } from './simulator.js';

/** Summary of one simulated workload. Times in seconds. */
export interface WorkloadMetrics {
  num_jobs: number;
  avg_jct_s: number;
  p50_jct_s: number;
  p99_jct_s: number;
  /** max over jobs of submission + JCT. */
  makespan_s: number;
  /** GPU time charged to jobs (restart delays included), in GPU-hours. */
  gpu_hours: number;
  /** Re-allocations after each job's first start, summed over jobs. */
  restarts: number;
  /** Charged GPU time / (cluster GPUs x makespan), in [0, 1]. */
  gpu_utilization: number;
}

/**
 * Percentile with linear interpolation between closest ranks (numpy's default), p in [0, 100].
 * Requires a non-empty array.
 */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const pos = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Computes the workload summary of a finished simulation. */
export function summarize(result: SimResult): WorkloadMetrics {
  const jcts = result.jobs.map((j) => j.jct_s);
  // A loop, not Math.max(...): a spread of over about 120,000 arguments overflows the stack.
  const makespan = result.jobs.reduce((m, j) => Math.max(m, j.submit_s + j.jct_s), -Infinity);
  const gpuSeconds = result.jobs.reduce((s, j) => s + j.attained_gpu_s, 0);
  return {
    num_jobs: jcts.length,
    avg_jct_s: jcts.reduce((s, x) => s + x, 0) / jcts.length,
    p50_jct_s: percentile(jcts, 50),
    p99_jct_s: percentile(jcts, 99),
    makespan_s: makespan,
    gpu_hours: gpuSeconds / 3600,
    restarts: result.jobs.reduce((s, j) => s + j.restarts, 0),
    gpu_utilization: makespan > 0 ? gpuSeconds / (result.total_gpus * makespan) : 0,
  };
}
