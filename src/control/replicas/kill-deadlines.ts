import type { ReplicaRecord } from '../../store/types.js';

/**
 * SIGKILL deadlines of jobs whose replicas were sent SIGTERM (a cancel, a failure, replicas of an
 * ended job found at a restart). In memory: a restarted server sets them again for what it adopts.
 */
export class KillDeadlines {
  private readonly at_ms = new Map<string, number>();

  /** The live replicas of `job_id` get SIGKILL from `deadline_ms` on. */
  set(job_id: string, deadline_ms: number): void {
    this.at_ms.set(job_id, deadline_ms);
  }

  /**
   * The replicas of `live` due for SIGKILL at `now_ms`: those of every job past its deadline, at
   * every call until none is left, so that a kill the backend could not deliver (slurmctld down)
   * is sent again instead of leaving the job running on its devices. A job past its deadline with
   * no live replica left is forgotten.
   */
  due(now_ms: number, live: readonly ReplicaRecord[]): ReplicaRecord[] {
    const out: ReplicaRecord[] = [];
    for (const [job_id, deadline_ms] of this.at_ms) {
      if (now_ms < deadline_ms) continue;
      const left = live.filter((r) => r.job_id === job_id);
      if (left.length === 0) this.at_ms.delete(job_id);
      out.push(...left);
    }
    return out;
  }
}
