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
   * The jobs whose deadline has passed at `now_ms`, in the order they were set: `due` needs their
   * live replicas.
   */
  dueJobs(now_ms: number): string[] {
    return [...this.at_ms].filter(([, deadline_ms]) => now_ms >= deadline_ms).map(([id]) => id);
  }

  /**
   * The replicas of `live` (at least every live replica of `dueJobs`) due for SIGKILL at `now_ms`:
   * those of every job past its deadline, at every call until none is left, so that a kill the
   * backend could not deliver (slurmctld down) is sent again instead of leaving the job running on
   * its devices. A job past its deadline with no live replica left is forgotten.
   */
  due(now_ms: number, live: readonly ReplicaRecord[]): ReplicaRecord[] {
    const ids = this.dueJobs(now_ms);
    if (ids.length === 0) return [];
    const due = new Set(ids);
    const byJob = replicasByJob(live.filter((r) => due.has(r.job_id)));
    const out: ReplicaRecord[] = [];
    for (const job_id of ids) {
      const left = byJob.get(job_id) ?? [];
      if (left.length === 0) this.at_ms.delete(job_id);
      out.push(...left);
    }
    return out;
  }
}

/** `live` grouped by job id (in their order): lookups by job in O(1) instead of a scan per job. */
export function replicasByJob(live: readonly ReplicaRecord[]): Map<string, ReplicaRecord[]> {
  const out = new Map<string, ReplicaRecord[]>();
  for (const r of live) {
    const list = out.get(r.job_id);
    if (list) list.push(r);
    else out.set(r.job_id, [r]);
  }
  return out;
}
