/** Schemas of request bodies (validated at the boundary; also published in the OpenAPI doc). */
import { z } from 'zod';
import { UNIX_USER } from '../multiuser/accounts.js';

export const limitsSchema = z.object({
  init_batch_size: z.number().int().min(1),
  max_batch_size: z.number().int().min(1),
  min_local_bsz: z.number().int().min(1),
  max_local_bsz: z.number().int().min(1),
  accumulation: z.boolean(),
}).refine((l) => l.min_local_bsz <= l.max_local_bsz && l.init_batch_size <= l.max_batch_size, 'need min_local_bsz <= max_local_bsz and init_batch_size <= max_batch_size');

const finite = z.number().finite();
/** Keys of one measurement's `breakdown` (docs/contract.md), and characters per key. */
const BREAKDOWN_KEYS = 32;
const BREAKDOWN_KEY_CHARS = 64;
const nonNegative = finite.min(0);

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
  breakdown: z
    .record(z.string().min(1).max(BREAKDOWN_KEY_CHARS, `key longer than ${BREAKDOWN_KEY_CHARS} characters`), finite)
    .refine((b) => Object.keys(b).length <= BREAKDOWN_KEYS, `more than ${BREAKDOWN_KEYS} keys`)
    .optional(),
});

/** Body of `POST /v1/jobs/{id}/reports` (docs/contract.md). */
export const reportBodySchema = z.object({
  attempt: z.number().int().min(0),
  limits: limitsSchema.optional(),
  reports: z.array(measurementSchema).min(1).max(1000),
});

/** Body of `POST /v1/tokens`: a user token (a user for themself; an admin for anyone). */
export const tokenBodySchema = z.object({
  user: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional().describe('Whose token; default the caller. Only an admin names another user.'),
  expires_in_s: z.number().int().min(1).max(10 * 365 * 86400).optional().describe('Lifetime; default: never expires (admin), the caller\'s own token\'s expiry (user).'),
  unix_user: z.string().regex(UNIX_USER).optional().describe('Admin only: the Unix account this user\'s jobs run as (goodput up --run-as-owner).'),
}).strict();
