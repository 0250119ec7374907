import { packedPlacement } from './artifact-arithmetic.js';
import type { JobMode } from './job-modes.js';
import { makeSimJob, type JobOutcome, type ResolvedSimOptions } from './simulator.js';
import type { WorkloadJob } from './workload.js';

/**
 * Finish-time fairness (Themis-style) of one job: its JCT divided by the JCT it would have had
 * alone on its fair share of the cluster. The fair share is ceil(GPUs / J) GPUs packed on as few
 * nodes as possible, J being the time-average number of active jobs while the job was active.
 * "Alone" is measured with the same trace model and the same batch-size rule as the policy's job
 * mode, starting at the first scheduling round after submission (one 30 s start-up delay), and takes the best replica count the policy
 * could have used within the share: the gang size for gang policies (its full gang even if the
 * share is smaller: the job cannot run on less), 1..share for fixed-batch policies, and powers of
 * two up to the share (plus the share itself) for adaptive ones, whose runs are costlier.
 */
export class FairShareEstimator {
  private readonly memo = new Map<string, number>();

  constructor(
    private readonly mode: JobMode,
    private readonly options: ResolvedSimOptions,
    private readonly totalGpus: number,
  ) {}

  /** Fair-share GPU count for a job that saw `avg_active_jobs` active jobs on average. */
  shareGpus(avg_active_jobs: number): number {
    return Math.max(1, Math.ceil(this.totalGpus / Math.max(1, avg_active_jobs)));
  }

  /** JCT (s) of `w` alone on `share` GPUs, best over the replica counts its policy could use. */
  isolatedJct(w: WorkloadJob, share: number): number {
    let best = Infinity;
    for (const r of this.candidates(w, share)) best = Math.min(best, this.jctOn(w, r));
    return best;
  }

  /**
   * JCT / isolated JCT for one simulated job. The isolated run also starts at the first
   * scheduling round after submission (rounds are every interval_s, the first at interval_s),
   * so a job that never waits for GPUs scores exactly 1 when its share is what it got.
   */
  ratio(w: WorkloadJob, outcome: JobOutcome): number {
    const interval = this.options.interval_s;
    const firstRound = Math.max(interval, Math.ceil(w.submit_s / interval) * interval);
    return outcome.jct_s / (firstRound - w.submit_s + this.isolatedJct(w, this.shareGpus(outcome.avg_active_jobs)));
  }

  private candidates(w: WorkloadJob, share: number): number[] {
    const isNcf = w.application.name === 'ncf';
    if (this.mode === 'gang') return [w.num_replicas];
    if (this.mode === 'fixed-oracle') {
      const max = isNcf ? 1 : Math.min(share, Math.floor(w.batch_size / w.application.min_local_bsz));
      return Array.from({ length: Math.max(1, max) }, (_, i) => i + 1);
    }
    const app = w.application;
    const max = isNcf
      ? 1
      : Math.max(1, Math.min(share, this.totalGpus, Math.floor(app.max_batch_size / app.min_local_bsz)));
    const out: number[] = [];
    for (let r = 1; r < max; r *= 2) out.push(r);
    out.push(max);
    return out;
  }

  private jctOn(w: WorkloadJob, r: number): number {
    const key = `${w.application.name}:${this.mode === 'adaptive' ? '' : w.batch_size}:${r}`;
    let jct = this.memo.get(key);
    if (jct === undefined) {
      const job = makeSimJob({ ...w, submit_s: 0 }, this.mode);
      job.reallocate(packedPlacement(r, this.options.gpus_per_node));
      // Fixed batches never change mid-run, so one long step is exact; adaptive jobs re-pick
      // their batch at interval ends, so they advance interval by interval like the simulator.
      const chunk = this.mode === 'adaptive' ? this.options.interval_s : 1e12;
      while (job.completion_s === null) job.step(chunk);
      jct = job.completion_s;
      this.memo.set(key, jct);
    }
    return jct;
  }
}
