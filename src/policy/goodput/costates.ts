import { candidateSteps } from './step-sizes.js';

/** What the costates read of a job (a RoundJob has it); `weight` is written. */
export interface CostateJob {
  /** Remaining work (1-GPU seconds, or a ranking stand-in): sets the order of completion. */
  readonly remaining_estimate: number;
  /** Largest replica count the job may get this round. */
  readonly max_replicas: number;
  speedup(replicas: number): number;
  weight: number;
}

/**
 * Weights from each job's own speedup curve: the costates of the problem without arrivals.
 *
 * Jobs complete in order of remaining work (the largest last) on `gpus` GPUs, and a phase in which
 * k jobs run costs `k^count_power` per second (1: the sum of completion times). The allocation that
 * minimizes the total cost maximizes `sum_i c_i S_i(r_i)` at every instant, where `c_i`, job i's
 * costate, is the cost saved per 1-GPU second of its work done, constant over its life. The problem
 * is autonomous with a free end, so the maximized value equals the phase's cost rate throughout.
 * Solved backward from the last job: `c_last = 1 / S_last(gpus)`, and with `V(g)` the best value of
 * the jobs that complete later on `g` GPUs, the next job's costate is the smallest `c` with
 * `max_m V(gpus - m) + c S(m) = k^count_power`, that is `c = min_m (k^count_power - V(gpus - m)) / S(m)`.
 * With the same curve `S(r) = r^p` for every job and `count_power` 1, the allocation is heSRPT's
 * (test); with different curves, GPUs go where a job's own curve gains most for its costate, so
 * a job that scales well is not starved by one that does not. `count_power` > 1 makes a crowded
 * cluster costlier than the jobs in it, as it is when jobs keep arriving (each one waiting also
 * delays the arrivals behind it), and favours the shortest jobs more.
 *
 * Pure; O(jobs x gpus x sizes), with sizes every count up to two nodes, then whole nodes about
 * 1.25x apart. Assigns `weight` (> 0) to every view; the views' order is unchanged.
 */
export function applyOwnCostates(views: CostateJob[], gpus: number, gpus_per_node: number, count_power: number): void {
  if (views.length === 0 || gpus <= 0) return;
  const byWorkDesc = views
    .map((_, i) => i)
    .sort((a, b) => (views[b] as CostateJob).remaining_estimate - (views[a] as CostateJob).remaining_estimate || b - a);
  // value[g]: best sum of c_j S_j(r_j) over the jobs that complete later, on g GPUs.
  let value = new Float64Array(gpus + 1);
  byWorkDesc.forEach((index, rank) => {
    const view = views[index] as CostateJob;
    const cost = Math.pow(rank + 1, count_power);
    const sizes = sizesOf(view, gpus, gpus_per_node);
    const speedups = sizes.map((m) => view.speedup(m));
    let costate = Infinity;
    sizes.forEach((m, j) => {
      const s = speedups[j] as number;
      if (s > 0) costate = Math.min(costate, (cost - (value[gpus - m] as number)) / s);
    });
    // A job that gains nothing at any size (or whose curve is degenerate) gets a token weight.
    view.weight = Number.isFinite(costate) && costate > 0 ? costate : Number.MIN_VALUE;
    const worth = speedups.map((s) => view.weight * s);
    const next = Float64Array.from(value);
    for (let g = 1; g <= gpus; g++) {
      let best = next[g] as number;
      for (let j = 0; j < sizes.length && (sizes[j] as number) <= g; j++) {
        const candidate = (value[g - (sizes[j] as number)] as number) + (worth[j] as number);
        if (candidate > best) best = candidate;
      }
      next[g] = best;
    }
    value = next;
  });
}

/** Replica counts evaluated for a job, ascending: every count up to two nodes, then whole nodes 1.25x apart. */
function sizesOf(view: CostateJob, gpus: number, gpus_per_node: number): number[] {
  const largest = Math.min(gpus, Math.max(view.max_replicas, 1));
  return candidateSteps(0, Math.min(largest, 2 * gpus_per_node), largest, gpus_per_node, 1.25);
}
