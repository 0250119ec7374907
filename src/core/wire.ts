/**
 * The wire types of the control plane (with job-spec.ts), one home for the server, the client
 * and the CLI: each is a zod schema (validated at the boundary, published in the OpenAPI
 * document) and its type is derived from it (`z.infer`), never declared a second time. Pure.
 */
import { z } from 'zod';
import type { BatchLimits } from '../goodput/types.js';

export const limitsSchema = z.object({
  init_batch_size: z.number().int().min(1),
  max_batch_size: z.number().int().min(1),
  min_local_bsz: z.number().int().min(1),
  max_local_bsz: z.number().int().min(1),
  accumulation: z.boolean(),
}).refine((l) => l.min_local_bsz <= l.max_local_bsz && l.init_batch_size <= l.max_batch_size, 'need min_local_bsz <= max_local_bsz and init_batch_size <= max_batch_size');

const finite = z.number().finite();
const nonNegative = finite.min(0);

/** One measurement of the report endpoint (docs/contract.md). */
export const measurementSchema = z.object({
  time_s: finite,
  step: z.number().int().min(0),
  epoch: nonNegative.optional(),
  num_nodes: z.number().int().min(1),
  num_replicas: z.number().int().min(1),
  local_bsz: z.number().int().min(1),
  accum_steps: z.number().int().min(0),
  step_time_s: nonNegative,
  sync_time_s: nonNegative,
  grad_sqr: finite.nullable().optional(),
  grad_var: finite.nullable().optional(),
  samples: nonNegative.optional(),
  loss: finite.nullable().optional(),
  remaining_samples: nonNegative.nullable().optional()
    .describe('Raw training samples the job still has to process (all epochs not yet finished minus the samples done in the current one); null or absent when unknown. See docs/contract.md.'),
  breakdown: z.record(z.string(), finite).optional(),
});

/** One measurement of the report endpoint (docs/contract.md). */
export type Measurement = z.output<typeof measurementSchema>;

/** Body of `POST /v1/jobs/{id}/reports` (docs/contract.md). */
export const reportBodySchema = z.object({
  attempt: z.number().int().min(0),
  limits: limitsSchema.optional(),
  reports: z.array(measurementSchema).min(1).max(1000),
});

/** Body of a report as a job sends it. */
export type ReportBody = z.input<typeof reportBodySchema>;

/** `config` of the report response: the configuration the job should use next. */
export const jobConfigSchema = z.object({
  local_bsz: z.number().int().min(1),
  accum_steps: z.number().int().min(0),
  batch_size: z.number().int().min(1),
  lr_scale: z.number().finite(),
});

/** Body of the report response's `config` (docs/contract.md). */
export type JobConfig = z.output<typeof jobConfigSchema>;

// The limits schema describes the model's BatchLimits exactly (checked at compile time).
const _limitsAreBatchLimits: (l: z.output<typeof limitsSchema>) => BatchLimits = (l) => l;

/** Body of `POST /v1/tokens`. */
export const tokenBodySchema = z.object({ user: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/) }).strict();
