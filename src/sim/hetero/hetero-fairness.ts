/**
 * Finish-time fairness on a mixed cluster: a job's JCT over its JCT alone on its fair share,
 * where the share is ceil(GPUs of the type / J) GPUs of one type (J: the time-average number of
 * active jobs while it was active), packed on as few nodes as possible, the best type taken, the
 * job learning its batch as it does in the shared run and starting at the first round after
 * submission (one restart time).
 */
import type { HeteroSimResult, ClusterPart, HeteroWorkloadJob } from './hetero-sim.js';
import { jobMaxReplicas } from './hetero-sim.js';
import { HeteroJob } from './hetero-job.js';
import { packedPlacement } from '../artifact-arithmetic.js';

const memo = new Map<string, number>();

/** JCT (s) of a job of `w`'s application alone on `gpus` GPUs of `part`'s type, from a 60 s round. */
function isolatedJct(w: HeteroWorkloadJob, part: ClusterPart, gpus: number): number {
  const r = Math.min(gpus, jobMaxReplicas(w.app));
  const key = `${w.app.name}:${part.type}:${part.gpus_per_node}:${r}`;
  let hit = memo.get(key);
  if (hit === undefined) {
    const job = new HeteroJob({
      name: 'alone',
      app: w.app,
      submit_s: 0,
      pooled: false,
      ...(w.app.name === 'ncf' ? { fixed_batch_size: 32768 } : {}),
    });
    job.reallocate(part.type, packedPlacement(r, part.gpus_per_node));
    let now = 0;
    while (job.completion_s === null && now < 365 * 86400) {
      job.step(60);
      now += 60;
    }
    hit = (job.completion_s ?? Infinity) + 60;
    memo.set(key, hit);
  }
  return hit;
}

/** Worst finish-time-fairness ratio over the jobs of `result`. */
export function heteroFairness(
  workload: readonly HeteroWorkloadJob[],
  result: HeteroSimResult,
  parts: readonly ClusterPart[],
): number {
  let worst = 0;
  result.jobs.forEach((outcome, i) => {
    const w = workload[i]!;
    const J = Math.max(1, outcome.avg_active_jobs);
    let alone = Infinity;
    for (const p of parts)
      alone = Math.min(alone, isolatedJct(w, p, Math.max(1, Math.ceil((p.nodes * p.gpus_per_node) / J))));
    worst = Math.max(worst, outcome.jct_s / alone);
  });
  return worst;
}
