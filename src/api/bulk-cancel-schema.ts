/**
 * The body and answer of `POST /v1/jobs/cancel` (bulk-cancel.ts), apart from the route so that
 * the contract (and the dashboard's bundle through it) imports no server code.
 */
import { z } from 'zod';

/** The filter: every field given must match; at least one is required (no accidental cancel of everything). */
export const bulkCancelBodySchema = z.strictObject({
  user: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe('owner of the jobs (default: the caller; another user: admin only)'),
  state: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe('states or groups, comma-separated as in GET /v1/jobs (default: active)'),
  name: z.string().min(1).max(256).optional().describe('exact job name'),
});

/** A job the bulk cancel cancelled, with the state it was in. */
export interface CancelledJobView {
  id: string;
  name: string;
  user: string;
  from: string;
}

/** The answer: how many were cancelled, and which. */
export interface BulkCancelView {
  cancelled: number;
  jobs: CancelledJobView[];
}
