/**
 * The wire type of a rank's summary (`POST /v1/jobs/{id}/ranks`, docs/contract.md "Rank
 * summaries"): what every rank of an SDK job posts every couple of seconds for the live verdicts
 * across ranks (doctor/ranks/). A zod schema; its type is derived from it. Pure.
 */
import { z } from 'zod';
import { REPORT_LIMITS } from './wire.js';

/** A window's sums may cover a long stall: bound them by a day's worth of seconds. */
const sum_s = z.number().finite().min(0).max(REPORT_LIMITS.time_s);

/** Body of a rank summary post. */
export const rankSummaryBodySchema = z.object({
  attempt: z.number().int().min(0).max(REPORT_LIMITS.attempt),
  rank: z
    .number()
    .int()
    .min(0)
    .max(REPORT_LIMITS.replicas - 1),
  window: z.object({
    steps: z.number().int().min(0).max(1_000_000).describe('steps finished since the previous summary'),
    data_wait_s: sum_s,
    compute_s: sum_s.describe('forward+backward and the optimizer, summed over the steps'),
    sync_s: sum_s.describe('waiting on peers in the gradient collective'),
    between_s: sum_s.describe("the script's own time after optimizer.step() until the next step"),
    step: z.number().int().min(-1).describe("the rank's step counter (-1 before its first step)"),
    phase: z.enum(['step', 'between', 'idle']).describe('where the rank is now'),
    phase_s: sum_s.describe('how long it has been there'),
  }),
});

/** A rank summary as a replica sends it. */
export type RankSummaryBody = z.infer<typeof rankSummaryBodySchema>;
