import { profilePoint } from '../goodput/profile.js';
import type { BatchLimits } from '../goodput/types.js';
import type { ReportBatch } from './store.js';
import type { Measurement } from './types.js';

/** A report batch as the controller builds it: each measurement with its profile point. Pure. */
export function reportBatch(
  job_id: string,
  attempt: number,
  limits: BatchLimits | undefined,
  reports: readonly Measurement[],
): ReportBatch {
  return { job_id, attempt, limits, reports, profile: reports.map(profilePoint) };
}
