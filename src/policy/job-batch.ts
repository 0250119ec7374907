import type { PolicyJob } from '../core/cluster.js';
import type { BatchPolicy } from '../goodput/speedup.js';

/**
 * The batch rule a job's speedup is computed with: its fixed total batch if it has one, else the
 * optimized batch up to the user's cap (if any). Takes a PolicyJob or a job's spec (same fields). Pure.
 */
export function jobBatchPolicy(job: Pick<PolicyJob, 'fixed_batch_size' | 'batch_size_cap'>): BatchPolicy {
  if (job.fixed_batch_size !== undefined) return { fixed_batch_size: job.fixed_batch_size };
  return job.batch_size_cap !== undefined ? { max_batch_size: job.batch_size_cap } : {};
}
