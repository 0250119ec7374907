/**
 * The report endpoint (`POST /v1/jobs/{id}/reports`, docs/contract.md) as one handler: the
 * control plane's API mounts it (app.ts), and `goodput profile` serves it alone for the job it
 * measures (reportApp), so that a replica reports the same way, under the same body limit,
 * schema and job token, whoever listens.
 */
import { Hono, type Context } from 'hono';
import type { JobConfig } from '../control/reports/batch-config.js';
import type { ReportRequest } from '../control/reports/report-ingest.js';
import { jobTokenClaim, verifyJobToken } from '../control/tokens.js';
import { reportBodySchema } from '../core/wire.js';
import type { ApiEnv, Principal } from './auth.js';
import { limitBody } from './body-limit.js';
import { errorBody, forbidden, statusOf, unauthorized } from './http-error.js';
import { jsonBody, parse } from './parse-body.js';

/** Largest request body accepted (a report of 1000 measurements is about 400 KB). */
export const MAX_BODY_BYTES = 4 << 20;

/** Who may post a job's reports: its job token, or an admin. */
function checkReporter(principal: Principal, id: string): void {
  if (principal.kind === 'job' && principal.job_id !== id)
    throw forbidden(`this token belongs to job ${principal.job_id}, not ${id}`);
  if (principal.kind === 'user' && !principal.admin)
    throw forbidden('reports are posted with the job token (GOODPUT_TOKEN)');
}

/**
 * The handler of `POST /v1/jobs/:id/reports` for an authenticated caller: checks who posts, reads
 * the body against the report schema (400 naming the field) and answers `{config}` from `report`.
 */
export async function handleReport(
  c: Context<ApiEnv>,
  report: (batch: ReportRequest) => Promise<JobConfig>,
): Promise<Response> {
  const id = c.req.param('id')!;
  checkReporter(c.get('principal'), id);
  const body = parse(reportBodySchema, await jsonBody(c, 'report'), 'report');
  const { attempt, limits, reports, checkpoint_on_stop, lr_rule } = body;
  const config = await report({
    job_id: id,
    attempt,
    limits,
    reports,
    checkpoint_on_stop,
    ...(lr_rule ? { lr_rule } : {}),
  });
  return c.json({ config });
}

/**
 * An app serving the report endpoint alone, for jobs whose token `secret` signed (control/tokens.ts),
 * with the API's error bodies and body limit: `goodput profile`'s listener.
 */
export function reportApp(secret: string, report: (batch: ReportRequest) => Promise<JobConfig>): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.onError((error, c) => {
    const body = errorBody(error);
    return c.json(body, statusOf(body.error.code));
  });
  app.notFound((c) => {
    const message = `no route ${c.req.method} ${c.req.path}; only reports are posted here`;
    return c.json({ error: { code: 'E_NOT_FOUND', message } }, 404);
  });
  app.use('*', limitBody(MAX_BODY_BYTES));
  app.use('/v1/*', async (c, next) => {
    const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    const claim = token === undefined ? undefined : jobTokenClaim(token);
    if (token === undefined || claim === undefined || !verifyJobToken(secret, claim, token)) throw unauthorized();
    c.set('principal', { kind: 'job', job_id: claim });
    await next();
  });
  app.post('/v1/jobs/:id/reports', (c) => handleReport(c, report));
  return app;
}
