/** The job specification on the wire: its schema and the types derived from it (pure). */
import { z } from 'zod';

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
