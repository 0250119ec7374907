/**
 * The one check of a report against the job it is for, a pure rule over plain data: the store
 * applies it inside the transaction that stores the report (it reads the job there), so no
 * caller hands the store a callback.
 */
import type { BatchLimits } from '../goodput/types.js';
import type { JobSpec } from './job-spec.js';
import type { Measurement } from './wire.js';

/** What of a report the check reads (a validated body or the store's ReportBatch). */
export interface ReportToCheck {
  attempt: number;
  limits?: BatchLimits | undefined;
  reports: readonly Pick<Measurement, 'num_replicas' | 'num_nodes' | 'local_bsz'>[];
}

/** What of the job the check reads. */
export interface JobToCheck {
  launches: number;
  spec: Pick<JobSpec, 'max_replicas'>;
  limits: BatchLimits | null;
}

/** Where an attempt actually runs, as the scheduler launched it: its replicas and their nodes. */
export interface AttemptShape {
  replicas: number;
  nodes: number;
}

/** The shape of an attempt from its recorded replicas; undefined when none are recorded. */
export function attemptShape(replicas: readonly { node: string }[]): AttemptShape | undefined {
  return replicas.length === 0
    ? undefined
    : { replicas: replicas.length, nodes: new Set(replicas.map((r) => r.node)).size };
}

/**
 * What is wrong with a (schema-valid) report for this job: an attempt it never launched, more
 * replicas than its spec allows, a shape (`num_replicas`, `num_nodes`) other than where the
 * attempt actually runs (`shape`, when its replicas are recorded: only measurements the
 * scheduler can vouch for reach the job's model and its key's profile), a local batch above its
 * batch limits (those in the body, else the stored ones). Empty when nothing is. Pure.
 */
export function reportIssues(body: ReportToCheck, job: JobToCheck, shape?: AttemptShape): string[] {
  const issues: string[] = [];
  const latest = Math.max(0, job.launches - 1);
  if (body.attempt > latest) issues.push(`attempt: ${body.attempt} was never launched (latest attempt: ${latest})`);
  const limits: BatchLimits | null = body.limits ?? job.limits;
  body.reports.forEach((m, i) => {
    if (m.num_replicas > job.spec.max_replicas)
      issues.push(
        `reports.${i}.num_replicas: ${m.num_replicas} is more than the job's max_replicas (${job.spec.max_replicas})`,
      );
    else if (shape && m.num_replicas !== shape.replicas)
      issues.push(
        `reports.${i}.num_replicas: ${m.num_replicas}, but attempt ${body.attempt} runs ${shape.replicas} replica(s)`,
      );
    if (shape && m.num_nodes !== shape.nodes)
      issues.push(`reports.${i}.num_nodes: ${m.num_nodes}, but attempt ${body.attempt} runs on ${shape.nodes} node(s)`);
    if (limits && m.local_bsz > limits.max_local_bsz)
      issues.push(`reports.${i}.local_bsz: ${m.local_bsz} is more than max_local_bsz (${limits.max_local_bsz})`);
  });
  return issues;
}
