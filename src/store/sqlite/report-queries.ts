import type { Measurement, ProfileRow, ReportRecord } from '../types.js';
import type { Row } from './rows.js';
import type { StoreCore } from './store-core.js';

/** The read side of reports (report-tx.ts writes them): raw reports and their per-config profile sums. */

/** Store.listReports: the newest `limit` reports of the job, oldest first. */
export function listReports(core: StoreCore, job_id: string, limit: number): ReportRecord[] {
  const rows = core.db
    .prepare('SELECT * FROM (SELECT * FROM reports WHERE job_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id')
    .all(job_id, limit) as Row[];
  return rows.map((r) => ({
    ...(JSON.parse(r.body as string) as Measurement),
    job_id,
    attempt: r.attempt as number,
    received_at_ms: r.received_at_ms as number,
  }));
}

/**
 * Store.getProfile: mean step times per configuration; with `gpu_type`, that type's rows and the
 * untyped ('') ones.
 */
export function getProfile(core: StoreCore, job_id: string, gpu_type?: string): ProfileRow[] {
  const rows = (
    gpu_type === undefined
      ? core.db
          .prepare('SELECT * FROM profiles WHERE job_id = ? ORDER BY num_nodes, num_replicas, local_bsz, gpu_type')
          .all(job_id)
      : core.db
          .prepare(
            "SELECT * FROM profiles WHERE job_id = ? AND gpu_type IN (?, '') ORDER BY num_nodes, num_replicas, local_bsz, gpu_type",
          )
          .all(job_id, gpu_type)
  ) as Row[];
  return rows.map((r) => {
    const count = r.count as number;
    return {
      gpu_type: r.gpu_type as string,
      num_nodes: r.num_nodes as number,
      num_replicas: r.num_replicas as number,
      local_bsz: r.local_bsz as number,
      count,
      accum_step_time_s: (r.sum_accum_step_time_s as number) / count,
      optim_step_time_s: (r.sum_optim_step_time_s as number) / count,
    };
  });
}
