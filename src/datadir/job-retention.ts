/**
 * Retention of ended jobs (`goodput up --job-retention-days N`): jobs that ended more than N days
 * ago are removed from the store with everything kept for them (events, reports, replicas,
 * idempotency keys; Store.deleteEndedJobs) and their directory under DIR/jobs (logs, run files,
 * checkpoints), so that neither the store nor the disk grows with history. Each user's GPU time
 * and job count are kept in aggregate by the store (Store.usage), so usage totals survive.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.js';

/** Jobs removed per store transaction: a few milliseconds each, with a yield between them. */
export const JOB_RETENTION_BATCH = 500;

/**
 * Removes every job that ended before `now_ms - retention_ms`, in batches of `batch` (one
 * transaction each, the event loop free between them), and their job directories. Returns how
 * many were removed. A directory that cannot be removed is left for the next sweep's log line.
 */
export async function sweepEndedJobs(
  store: Pick<Store, 'deleteEndedJobs'>,
  jobs_dir: string,
  retention_ms: number,
  now_ms: number,
  batch = JOB_RETENTION_BATCH,
): Promise<number> {
  if (!Number.isFinite(retention_ms)) return 0;
  let removed = 0;
  for (;;) {
    const ids = await store.deleteEndedJobs(now_ms - retention_ms, batch);
    for (const id of ids) rmSync(join(jobs_dir, id), { recursive: true, force: true });
    removed += ids.length;
    if (ids.length < batch) return removed;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
