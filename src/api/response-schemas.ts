/** zod schemas of the API's answers that have one (types by z.infer in contract.ts). */
import { z } from 'zod';
import { jobConfigSchema } from '../core/wire.js';

/** `GET /v1/health`. */
export const healthSchema = z.object({
  ok: z.boolean(),
  version: z.string(),
  store: z.object({ state: z.string(), detail: z.string().optional() }),
});

/** `POST /v1/jobs/{id}/reports`: the configuration the job should use next (docs/contract.md). */
export const reportResponseSchema = z.object({ config: jobConfigSchema });

/** Every error answer: `{"error": {"code", "message"}}` (api/http-error.ts). */
export const errorBodySchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** Schemas of the answers that have one, by route (contract.ts ApiRoute), checked by the client at run time. */
export const RESPONSE_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  'GET /v1/health': healthSchema,
  'POST /v1/jobs/{id}/reports': reportResponseSchema,
};
