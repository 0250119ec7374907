/**
 * The wire types of the control plane, one home for the server, the client and the CLI: each is
 * a zod schema (validated at the boundary, published in the OpenAPI document) and its type is
 * derived from it (`z.infer`), never declared a second time. Pure (no Node API).
 */
import { z } from 'zod';
import type { BatchLimits } from '../goodput/types.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables the contract sets; a spec may not override them. */
const RESERVED_ENV = /^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|CUDA_VISIBLE_DEVICES|GOODPUT_.*)$/;

/**
 * Schema of a job spec as accepted from users (HTTP body or file; control/job-spec.ts reads
 * files and applies the default workdir). Stages: `JobSpecInput` (what the user writes, optional
 * fields) -> `JobSpec` (validated, defaults applied, workdir absolute).
 */
export const jobSpecSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'letters, digits, ".", "_" or "-", at most 63, starting with a letter or digit'),
    command: z.array(z.string().refine((s) => !s.includes('\0'), 'must not contain NUL')).min(1, 'needs at least the program'),
    workdir: z.string().min(1).optional(),
    env: z
      .record(z.string().regex(ENV_NAME, 'invalid variable name').refine((k) => !RESERVED_ENV.test(k), 'is set by goodput (see docs/contract.md)'), z.string())
      .default({}),
    min_replicas: z.number().int().min(0).max(1024).default(0),
    max_replicas: z.number().int().min(1).max(1024).default(1),
    max_restarts: z.number().int().min(0).max(1000).default(3),
    preemptible: z.boolean().default(true),
    priority: z.number().int().min(-1000).max(1000).default(0),
    user: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional(),
    fixed_batch_size: z.number().int().min(1).optional(),
    batch_size_cap: z.number().int().min(1).optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.min_replicas > s.max_replicas) ctx.addIssue({ code: 'custom', path: ['min_replicas'], message: `must be <= max_replicas (${s.max_replicas})` });
    if (s.fixed_batch_size !== undefined && s.batch_size_cap !== undefined) ctx.addIssue({ code: 'custom', path: ['batch_size_cap'], message: 'cannot be combined with fixed_batch_size' });
    // POSIX absolute path (the control plane runs on Linux); a pure check keeps core/ free of node:path.
    if (s.workdir !== undefined && !s.workdir.startsWith('/')) ctx.addIssue({ code: 'custom', path: ['workdir'], message: 'must be an absolute path' });
  });

/** What a user writes; every field but name and command is optional. */
export type JobSpecInput = z.input<typeof jobSpecSchema>;

/**
 * A validated job specification: defaults applied, `workdir` absolute (required). `command` is
 * argv, never interpolated into a shell.
 */
export type JobSpec = Omit<z.output<typeof jobSpecSchema>, 'workdir'> & { workdir: string };

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
