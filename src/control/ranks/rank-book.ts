/**
 * The rank summaries of running jobs, in memory: per job its current attempt and per rank a
 * bounded window of recent summaries (`max_windows`, default 32: about a minute at one summary
 * per 2 s), the step counter and when it last advanced, on the control plane's clock. Bounded by
 * construction: a new attempt replaces the old one's ranks, an ended job is forgotten. Not
 * persisted: the verdicts it feeds are about the last minute, and a restarted server hears every
 * rank again within seconds.
 */
import type { RankSummaryBody } from '../../core/rank-wire.js';
import type { RankState, RankWindow } from '../../doctor/ranks/rank-state.js';

interface Rank {
  windows: RankWindow[];
  last_heard_ms: number;
  step: number;
  progress_ms: number | null;
  phase: RankState['phase'];
  phase_s: number;
}

export class RankBook {
  private readonly jobs = new Map<string, { attempt: number; ranks: Map<number, Rank> }>();

  constructor(private readonly max_windows = 32) {}

  /** Adds one summary received at `now_ms`; a summary of an older attempt than the newest heard is dropped. */
  add(job_id: string, body: RankSummaryBody, now_ms: number): void {
    let job = this.jobs.get(job_id);
    if (job && body.attempt < job.attempt) return;
    if (!job || body.attempt > job.attempt) this.jobs.set(job_id, (job = { attempt: body.attempt, ranks: new Map() }));
    const w = body.window;
    let r = job.ranks.get(body.rank);
    if (!r) {
      r = { windows: [], last_heard_ms: now_ms, step: -1, progress_ms: null, phase: 'idle', phase_s: 0 };
      job.ranks.set(body.rank, r);
    }
    r.windows.push({
      received_ms: now_ms,
      steps: w.steps,
      data_wait_s: w.data_wait_s,
      compute_s: w.compute_s,
      sync_s: w.sync_s,
      between_s: w.between_s,
    });
    if (r.windows.length > this.max_windows) r.windows.splice(0, r.windows.length - this.max_windows);
    if (w.steps > 0 || w.step > r.step) r.progress_ms = now_ms;
    r.step = Math.max(r.step, w.step);
    r.last_heard_ms = now_ms;
    r.phase = w.phase;
    r.phase_s = w.phase_s;
  }

  /** The attempt whose ranks are kept for a job, or undefined. */
  attempt(job_id: string): number | undefined {
    return this.jobs.get(job_id)?.attempt;
  }

  /** The ranks of a job's `attempt` (none for another attempt), by rank, with where each runs. */
  ranks(
    job_id: string,
    attempt: number,
    where: (rank: number) => { node: string; device: number | null },
  ): RankState[] {
    const job = this.jobs.get(job_id);
    if (!job || job.attempt !== attempt) return [];
    return [...job.ranks]
      .sort(([a], [b]) => a - b)
      .map(([rank, r]) => ({ rank, ...where(rank), ...r, windows: [...r.windows] }));
  }

  /** Job ids with summaries. */
  jobIds(): string[] {
    return [...this.jobs.keys()];
  }

  forget(job_id: string): void {
    this.jobs.delete(job_id);
  }
}
