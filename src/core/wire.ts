/**
 * The wire types of the control plane (with job-spec.ts), one home for the server, the client
 * and the CLI: each is a zod schema (validated at the boundary, published in the OpenAPI
 * document) and its type is derived from it (`z.infer`), never declared a second time. Pure.
 */
import { z } from 'zod';
import type { BatchLimits } from '../goodput/types.js';
import { DIST_BACKEND_RE } from './dist-backend.js';
import { LR_RULES } from './lr-rule.js';

/** Upper bounds no real training job reaches; a value past one is a bug or an attack. */
export const REPORT_LIMITS = {
  attempt: 1_000_000,
  replicas: 1024,
  batch: 1 << 24,
  accum_steps: 10_000,
  /** A day per optimizer step. */
  time_s: 86_400,
  samples: 1e18,
  /** Parameters of one model: a thousand times the largest trained today. */
  model_parameters: 1e15,
  /** Keys of one measurement's `breakdown` (docs/contract.md), and characters per key. */
  /** Wall times (epoch s): the year 2286; past it a clock or a unit is wrong (ms sent as s). */
  epoch_s: 1e10,
  /** Gradient statistics and loss: far past any real value, far below where products overflow. */
  statistic: 1e30,
  breakdown_keys: 32,
  breakdown_key_chars: 64,
} as const;

const finite = z.number().finite();
const nonNegative = finite.min(0);
const seconds = nonNegative.max(REPORT_LIMITS.time_s);
const epochSeconds = nonNegative.max(
  REPORT_LIMITS.epoch_s,
  `expected a wall time in epoch seconds (at most ${REPORT_LIMITS.epoch_s})`,
);
const statistic = finite.min(-REPORT_LIMITS.statistic).max(REPORT_LIMITS.statistic);
const batch = z.number().int().min(1).max(REPORT_LIMITS.batch);
const PARAMETER_COUNT =
  'expected a positive integer: the number of elements of the parameters whose gradients are all-reduced';
const parameterCount = z
  .number({ error: PARAMETER_COUNT })
  .int(PARAMETER_COUNT)
  .min(1, PARAMETER_COUNT)
  .max(REPORT_LIMITS.model_parameters, `expected at most ${REPORT_LIMITS.model_parameters} parameters`);

export const limitsSchema = z
  .object({
    init_batch_size: batch,
    max_batch_size: batch,
    min_local_bsz: batch,
    max_local_bsz: batch,
    accumulation: z.boolean(),
  })
  .refine(
    (l) => l.min_local_bsz <= l.max_local_bsz && l.init_batch_size <= l.max_batch_size,
    'need min_local_bsz <= max_local_bsz and init_batch_size <= max_batch_size',
  );

/** One measurement of the report endpoint (docs/contract.md). */
export const measurementSchema = z
  .object({
    time_s: epochSeconds,
    step: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    epoch: nonNegative.max(1e9).optional(),
    num_nodes: z.number().int().min(1).max(REPORT_LIMITS.replicas),
    num_replicas: z.number().int().min(1).max(REPORT_LIMITS.replicas),
    local_bsz: batch,
    accum_steps: z.number().int().min(0).max(REPORT_LIMITS.accum_steps),
    step_time_s: seconds,
    sync_time_s: seconds,
    grad_sqr: statistic.nullable().optional(),
    grad_var: statistic.nullable().optional(),
    samples: nonNegative.max(REPORT_LIMITS.samples).optional(),
    loss: statistic.nullable().optional(),
    memory_peak_bytes: z
      .number()
      .int()
      .min(0)
      .max(2 ** 53)
      .nullable()
      .optional()
      .describe(
        'Peak GPU memory the allocator held since the previous entry ' +
          '(torch.cuda.max_memory_allocated), bytes; null or absent on CPU. goodput profile fits ' +
          'memory per sample from it. See docs/contract.md.',
      ),
    remaining_samples: nonNegative
      .max(REPORT_LIMITS.samples)
      .nullable()
      .optional()
      .describe(
        'Raw training samples the job still has to process (all epochs not yet finished minus the ' +
          'samples done in the current one); null or absent when unknown. See docs/contract.md.',
      ),
    model_parameters: parameterCount
      .nullable()
      .optional()
      .describe(
        "Parameter count of the job's model: elements of the parameters whose gradients are " +
          'all-reduced (requires_grad); null or absent when unknown. Kept in the profile of the ' +
          "job's profile key. See docs/contract.md.",
      ),
    checkpoint_time_s: epochSeconds
      .nullable()
      .optional()
      .describe(
        'Wall time (epoch s) when the newest checkpoint the job would resume from became durable; ' +
          'null or absent when it has none. See docs/contract.md.',
      ),
    host: z
      .object({
        cpu_count: z
          .number()
          .int()
          .min(1)
          .max(1 << 20),
        torch_threads: z
          .number()
          .int()
          .min(1)
          .max(1 << 20),
        local_processes: z
          .number()
          .int()
          .min(1)
          .max(1 << 20)
          .optional(),
        dataloader_workers: z
          .number()
          .int()
          .min(0)
          .max(1 << 20)
          .optional(),
        in_memory_dataset: z
          .boolean()
          .optional()
          .describe(
            'true: the training loader reads tensors already in memory (a TensorDataset), so its data ' +
              'wait is indexing and collating, no I/O; absent when not known. See docs/contract.md.',
          ),
        // Diagnostic only: a malformed name is dropped rather than costing the report.
        dist_backend: z
          .string()
          .regex(DIST_BACKEND_RE)
          .optional()
          .catch(undefined)
          .describe(
            'torch.distributed backend of the default process group ("nccl", "gloo", ...); absent when ' +
              'torch.distributed is not initialized. The doctor gives NCCL transport advice only for ' +
              '"nccl". See docs/contract.md.',
          ),
      })
      .nullable()
      .optional()
      .describe(
        'CPU threads of the training processes on the reporting host (cores usable, torch intra-op ' +
          'threads, processes on the host, DataLoader workers each), which the doctor compares for ' +
          'thread oversubscription, and the torch.distributed backend. See docs/contract.md.',
      ),
    // Diagnostic only: bounded, but a slightly negative estimate does not cost the whole report.
    breakdown: z
      .record(
        z
          .string()
          .min(1)
          .max(REPORT_LIMITS.breakdown_key_chars, `key longer than ${REPORT_LIMITS.breakdown_key_chars} characters`),
        finite.min(-REPORT_LIMITS.time_s).max(REPORT_LIMITS.time_s),
      )
      .refine(
        (b) => Object.keys(b).length <= REPORT_LIMITS.breakdown_keys,
        `more than ${REPORT_LIMITS.breakdown_keys} keys`,
      )
      .optional(),
  })
  .refine((m) => m.num_nodes <= m.num_replicas, { message: 'num_nodes must be <= num_replicas', path: ['num_nodes'] });

/** One measurement of the report endpoint (docs/contract.md). */
export type Measurement = z.output<typeof measurementSchema>;

/** The learning-rate rules (core/lr-rule.ts) as a schema. */
export const lrRuleSchema = z.enum(LR_RULES);
export type { LrRule } from './lr-rule.js';

/** Body of `POST /v1/jobs/{id}/reports` (docs/contract.md). */
export const reportBodySchema = z.object({
  attempt: z.number().int().min(0).max(REPORT_LIMITS.attempt),
  limits: limitsSchema.optional(),
  reports: z.array(measurementSchema).min(1).max(1000),
  checkpoint_on_stop: z
    .boolean()
    .optional()
    .describe(
      'true: the job checkpoints when sent SIGTERM and exits 143, so stopping it loses no progress (the SDK sends true). See docs/contract.md.',
    ),
  lr_rule: lrRuleSchema
    .optional()
    .describe(
      "The script's learning-rate scaling rule (the SDK sends it): " +
        'the control plane predicts and states the learning-rate factor by it. Absent: AdaScale.',
    ),
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

/** A Unix account name as `useradd` accepts it by default (the account a user's jobs run as). */
export const UNIX_USER = /^[a-z_][a-z0-9_-]{0,31}$/;

/**
 * A Slurm account name (`sbatch --account`): letters, digits, `_`, `.`, `-`, as sacctmgr creates
 * them; nothing an #SBATCH line would need to quote.
 */
export const SLURM_ACCOUNT = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

/** Body of `POST /v1/tokens`: a user token (a user for themself; an admin for anyone). */
export const tokenBodySchema = z
  .object({
    user: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/)
      .optional()
      .describe('Whose token; default the caller. Only an admin names another user.'),
    expires_in_s: z
      .number()
      .int()
      .min(1)
      .max(10 * 365 * 86400)
      .optional()
      .describe("Lifetime; default: never expires (admin), the caller's own token's expiry (user)."),
    unix_user: z
      .string()
      .regex(UNIX_USER)
      .optional()
      .describe("Admin only: the Unix account this user's jobs run as (goodput up --run-as-owner)."),
    slurm_account: z
      .string()
      .regex(SLURM_ACCOUNT)
      .optional()
      .describe(
        "Admin only: the Slurm account this user's jobs are charged to (goodput up --backend slurm " +
          '--run-as-owner); needs a Unix account, set now or before.',
      ),
  })
  .strict();
