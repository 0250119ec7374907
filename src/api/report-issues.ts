import type { BatchLimits } from '../goodput/types.js';
import type { z } from 'zod';
import type { reportBodySchema } from '../core/wire.js';
import type { JobRecord, ReplicaRecord } from '../store/types.js';

/** A report body as validated by `reportBodySchema`. */
type ReportBodyParsed = z.output<typeof reportBodySchema>;

/** Where an attempt actually runs, as the scheduler launched it: its replicas and their nodes. */
export interface AttemptShape {
  replicas: number;
  nodes: number;
}

/** The shape of an attempt from its recorded replicas; undefined when none are recorded. */
export function attemptShape(replicas: readonly Pick<ReplicaRecord, 'node'>[]): AttemptShape | undefined {
  return replicas.length === 0 ? undefined : { replicas: replicas.length, nodes: new Set(replicas.map((r) => r.node)).size };
}

/**
 * What is wrong with a (schema-valid) report for this job: an attempt it never launched, more
 * replicas than its spec allows, a shape (`num_replicas`, `num_nodes`) other than where the
 * attempt actually runs (`shape`, when its replicas are recorded: only measurements the
 * scheduler can vouch for reach the job's model and its key's profile), a local batch above its
 * batch limits (those in the body, else the stored ones). Empty when nothing is. Pure.
 */
export function reportIssues(body: ReportBodyParsed, job: Pick<JobRecord, 'launches' | 'spec' | 'limits'>, shape?: AttemptShape): string[] {
  const issues: string[] = [];
  const latest = Math.max(0, job.launches - 1);
  if (body.attempt > latest) issues.push(`attempt: ${body.attempt} was never launched (latest attempt: ${latest})`);
  const limits: BatchLimits | null = body.limits ?? job.limits;
  body.reports.forEach((m, i) => {
    if (m.num_replicas > job.spec.max_replicas) issues.push(`reports.${i}.num_replicas: ${m.num_replicas} is more than the job's max_replicas (${job.spec.max_replicas})`);
    else if (shape && m.num_replicas !== shape.replicas) issues.push(`reports.${i}.num_replicas: ${m.num_replicas}, but attempt ${body.attempt} runs ${shape.replicas} replica(s)`);
    if (shape && m.num_nodes !== shape.nodes) issues.push(`reports.${i}.num_nodes: ${m.num_nodes}, but attempt ${body.attempt} runs on ${shape.nodes} node(s)`);
    if (limits && m.local_bsz > limits.max_local_bsz) issues.push(`reports.${i}.local_bsz: ${m.local_bsz} is more than max_local_bsz (${limits.max_local_bsz})`);
  });
  return issues;
}
