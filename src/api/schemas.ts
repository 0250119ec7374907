/**
 * Schemas of request bodies (validated at the boundary; also published in the OpenAPI doc).
 * Report values are bounded twice: absolute sane limits here (zod), and against the job they
 * are posted for (`reportIssues`: its spec, its launched attempts, its batch limits).
 */
import { z } from 'zod';
import type { BatchLimits } from '../goodput/types.js';
import type { JobRecord } from '../store/types.js';
import { UNIX_USER } from '../multiuser/accounts.js';

/** Upper bounds no real training job reaches; a value past one is a bug or an attack. */
export const REPORT_LIMITS = {
  attempt: 1_000_000,
  replicas: 1024,
  batch: 1 << 24,
  accum_steps: 10_000,
  /** A day per optimizer step. */
  time_s: 86_400,
  samples: 1e18,
  /** Keys of one measurement's `breakdown` (docs/contract.md), and characters per key. */
  breakdown_keys: 32,
  breakdown_key_chars: 64,
} as const;

const finite = z.number().finite();
const nonNegative = finite.min(0);
const seconds = nonNegative.max(REPORT_LIMITS.time_s);
const batch = z.number().int().min(1).max(REPORT_LIMITS.batch);

export const limitsSchema = z.object({
  init_batch_size: batch,
  max_batch_size: batch,
  min_local_bsz: batch,
  max_local_bsz: batch,
  accumulation: z.boolean(),
}).refine((l) => l.min_local_bsz <= l.max_local_bsz && l.init_batch_size <= l.max_batch_size, 'need min_local_bsz <= max_local_bsz and init_batch_size <= max_batch_size');

export const measurementSchema = z.object({
  time_s: nonNegative,
  step: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  epoch: nonNegative.max(1e9).optional(),
  num_nodes: z.number().int().min(1).max(REPORT_LIMITS.replicas),
  num_replicas: z.number().int().min(1).max(REPORT_LIMITS.replicas),
  local_bsz: batch,
  accum_steps: z.number().int().min(0).max(REPORT_LIMITS.accum_steps),
  step_time_s: seconds,
  sync_time_s: seconds,
  grad_sqr: finite.nullable().optional(),
  grad_var: finite.nullable().optional(),
  samples: nonNegative.max(REPORT_LIMITS.samples).optional(),
  loss: finite.nullable().optional(),
  remaining_samples: nonNegative.max(REPORT_LIMITS.samples).nullable().optional()
    .describe('Raw training samples the job still has to process (all epochs not yet finished minus the samples done in the current one); null or absent when unknown. See docs/contract.md.'),
  checkpoint_time_s: finite.nullable().optional()
    .describe('Wall time (epoch s) when the newest checkpoint the job would resume from became durable; null or absent when it has none. See docs/contract.md.'),
  // Diagnostic only: bounded, but a slightly negative estimate does not cost the whole report.
  breakdown: z
    .record(z.string().min(1).max(REPORT_LIMITS.breakdown_key_chars, `key longer than ${REPORT_LIMITS.breakdown_key_chars} characters`), finite.min(-REPORT_LIMITS.time_s).max(REPORT_LIMITS.time_s))
    .refine((b) => Object.keys(b).length <= REPORT_LIMITS.breakdown_keys, `more than ${REPORT_LIMITS.breakdown_keys} keys`)
    .optional(),
}).refine((m) => m.num_nodes <= m.num_replicas, { message: 'num_nodes must be <= num_replicas', path: ['num_nodes'] });

/** Body of `POST /v1/jobs/{id}/reports` (docs/contract.md). */
export const reportBodySchema = z.object({
  attempt: z.number().int().min(0).max(REPORT_LIMITS.attempt),
  limits: limitsSchema.optional(),
  reports: z.array(measurementSchema).min(1).max(1000),
  checkpoint_on_stop: z.boolean().optional()
    .describe('true: the job checkpoints when sent SIGTERM and exits 143, so stopping it loses no progress (the SDK sends true). See docs/contract.md.'),
});

/** A report body as validated by `reportBodySchema`. */
export type ReportBody = z.infer<typeof reportBodySchema>;

/**
 * What is wrong with a (schema-valid) report for this job: an attempt it never launched, more
 * replicas than its spec allows, a local batch above its batch limits (those in the body, else
 * the stored ones). Empty when nothing is. Pure.
 */
export function reportIssues(body: ReportBody, job: Pick<JobRecord, 'launches' | 'spec' | 'limits'>): string[] {
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

/** Body of `POST /v1/tokens`: a user token (a user for themself; an admin for anyone). */
export const tokenBodySchema = z.object({
  user: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional().describe('Whose token; default the caller. Only an admin names another user.'),
  expires_in_s: z.number().int().min(1).max(10 * 365 * 86400).optional().describe('Lifetime; default: never expires (admin), the caller\'s own token\'s expiry (user).'),
  unix_user: z.string().regex(UNIX_USER).optional().describe('Admin only: the Unix account this user\'s jobs run as (goodput up --run-as-owner).'),
}).strict();
