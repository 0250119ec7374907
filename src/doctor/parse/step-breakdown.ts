import { z } from 'zod';

import { DIST_BACKEND_RE } from '../../core/dist-backend.js';
import type { HostThreads, StepBreakdown } from './step-summary.js';

export type { StepBreakdown } from './step-summary.js';

/** One training step of one rank, as the Goodput SDK exports it (seconds). */
export const StepRecordSchema = z.object({
  rank: z.number().int().min(0),
  step: z.number().int().min(0),
  data_wait_s: z.number().min(0),
  forward_backward_s: z.number().min(0),
  sync_s: z.number().min(0),
  optimizer_s: z.number().min(0),
  between_steps_s: z.number().min(0).optional(),
});
export type StepRecord = z.infer<typeof StepRecordSchema>;

/** `{"kind": "goodput.step_breakdown", "job": ..., "steps": [...]}`; see docs/doctor.md. */
export const StepBreakdownSchema = z.object({
  kind: z.literal('goodput.step_breakdown'),
  job: z.string().optional(),
  /** Optional: the process's CPU threads, which make thread oversubscription visible. */
  host: z
    .object({
      cpu_count: z.number().int().min(1),
      torch_threads: z.number().int().min(1),
      local_processes: z.number().int().min(1).optional(),
      dataloader_workers: z.number().int().min(0).optional(),
      // Ignored, not fatal, when malformed: the advice then just does not assume a backend.
      dist_backend: z.string().regex(DIST_BACKEND_RE).optional().catch(undefined),
    })
    .optional(),
  steps: z.array(StepRecordSchema).min(1),
});

/** True when a parsed JSON value has the shape of a step-breakdown export (object or bare array). */
export function looksLikeStepBreakdown(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && StepRecordSchema.safeParse(value[0]).success;
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'goodput.step_breakdown';
}

/** The host object without a `dist_backend` key when its value was absent or malformed. */
function hostOf(h: NonNullable<z.infer<typeof StepBreakdownSchema>['host']>): HostThreads {
  const { dist_backend, ...threads } = h;
  return dist_backend === undefined ? threads : { ...threads, dist_backend };
}

/**
 * Validates an export; throws an Error whose message names the first bad field (e.g.
 * `steps.3.sync_s: Too small`). Pure.
 */
export function parseStepBreakdown(value: unknown): StepBreakdown {
  const result = Array.isArray(value)
    ? z.array(StepRecordSchema).min(1).safeParse(value)
    : StepBreakdownSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue ? issue.path.join('.') : '';
    throw new Error(
      `not a valid goodput.step_breakdown export: ${path ? path + ': ' : ''}${issue?.message ?? 'invalid'}`,
    );
  }
  if (Array.isArray(result.data)) return { steps: result.data as StepRecord[] };
  const data = result.data as z.infer<typeof StepBreakdownSchema>;
  return { job: data.job, steps: data.steps, ...(data.host ? { host: hostOf(data.host) } : {}) };
}

export { summarizeSteps, type RankStepSummary } from './step-summary.js';
