import type { BatchLimits } from '../goodput/types.js';
import type { z } from 'zod';
import type { reportBodySchema } from '../core/wire.js';
import type { JobRecord } from '../store/types.js';

/** A report body as validated by `reportBodySchema`. */
type ReportBodyParsed = z.output<typeof reportBodySchema>;

/**
 * What is wrong with a (schema-valid) report for this job: an attempt it never launched, more
 * replicas than its spec allows, a local batch above its batch limits (those in the body, else
 * the stored ones). Empty when nothing is. Pure.
 */
export function reportIssues(body: ReportBodyParsed, job: Pick<JobRecord, 'launches' | 'spec' | 'limits'>): string[] {
  const issues: string[] = [];
  const latest = Math.max(0, job.launches - 1);
  if (body.attempt > latest) issues.push(`attempt: ${body.attempt} was never launched (latest attempt: ${latest})`);
  const limits: BatchLimits | null = body.limits ?? job.limits;
  body.reports.forEach((m, i) => {
    if (m.num_replicas > job.spec.max_replicas) issues.push(`reports.${i}.num_replicas: ${m.num_replicas} is more than the job's max_replicas (${job.spec.max_replicas})`);
    if (limits && m.local_bsz > limits.max_local_bsz) issues.push(`reports.${i}.local_bsz: ${m.local_bsz} is more than max_local_bsz (${limits.max_local_bsz})`);
  });
  return issues;
}
