import { z } from 'zod';

/** One training step of one rank, as the Goodput SDK exports it (seconds). */
export const StepRecordSchema = z.object({
  rank: z.number().int().min(0),
  step: z.number().int().min(0),
  data_wait_s: z.number().min(0),
  forward_backward_s: z.number().min(0),
  sync_s: z.number().min(0),
  optimizer_s: z.number().min(0),
});
export type StepRecord = z.infer<typeof StepRecordSchema>;

/** `{"kind": "goodput.step_breakdown", "job": ..., "steps": [...]}`; see docs/doctor.md. */
export const StepBreakdownSchema = z.object({
  kind: z.literal('goodput.step_breakdown'),
  job: z.string().optional(),
  steps: z.array(StepRecordSchema).min(1),
});

/** A validated export. */
export interface StepBreakdown {
  readonly job?: string;
  readonly steps: readonly StepRecord[];
}

/** True when a parsed JSON value has the shape of a step-breakdown export (object or bare array). */
export function looksLikeStepBreakdown(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && StepRecordSchema.safeParse(value[0]).success;
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'goodput.step_breakdown';
}

/**
 * Validates an export; throws an Error whose message names the first bad field (e.g.
 * `steps.3.sync_s: Too small`). Pure.
 */
export function parseStepBreakdown(value: unknown): StepBreakdown {
  const result = Array.isArray(value) ? z.array(StepRecordSchema).min(1).safeParse(value) : StepBreakdownSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue ? issue.path.join('.') : '';
    throw new Error(`not a valid goodput.step_breakdown export: ${path ? path + ': ' : ''}${issue?.message ?? 'invalid'}`);
  }
  if (Array.isArray(result.data)) return { steps: result.data };
  const data = result.data as z.infer<typeof StepBreakdownSchema>;
  return { job: data.job, steps: data.steps };
}

/** Mean phase times per rank and the share of each phase in the step (0..1). */
export interface RankStepSummary {
  readonly rank: number;
  readonly steps: number;
  readonly step_time_s: number;
  readonly data_wait_s: number;
  readonly forward_backward_s: number;
  readonly sync_s: number;
  readonly optimizer_s: number;
}

/** Pure; ranks sorted ascending. */
export function summarizeSteps(b: StepBreakdown): RankStepSummary[] {
  const acc = new Map<number, { n: number; d: number; f: number; s: number; o: number }>();
  for (const r of b.steps) {
    const a = acc.get(r.rank) ?? { n: 0, d: 0, f: 0, s: 0, o: 0 };
    a.n++; a.d += r.data_wait_s; a.f += r.forward_backward_s; a.s += r.sync_s; a.o += r.optimizer_s;
    acc.set(r.rank, a);
  }
  return [...acc.entries()].sort((x, y) => x[0] - y[0]).map(([rank, a]) => ({
    rank, steps: a.n, step_time_s: (a.d + a.f + a.s + a.o) / a.n,
    data_wait_s: a.d / a.n, forward_backward_s: a.f / a.n, sync_s: a.s / a.n, optimizer_s: a.o / a.n,
  }));
}
