import { createReadStream, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Hono, type Context } from 'hono';
import type { MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import type { Controller } from '../control/controller.js';
import { formatIssues, validateJobSpec } from '../control/job-spec.js';
import { hashToken, newToken } from '../control/tokens.js';
import { GoodputError } from '../core/errors.js';
import { reportBodySchema, tokenBodySchema } from '../core/wire.js';
import type { Store } from '../store/store.js';
import type { JobRecord } from '../store/types.js';
import { authenticate, mayAccess, requireUser, type ApiEnv, type Principal } from './auth.js';
import { badRequest, errorBody, forbidden, statusOf } from './http-error.js';
import { metricsText } from './metrics.js';
import { openApiDocument } from './openapi.js';
import { eventView, jobView, replicaView, type JobDetail, type NodeView } from './views.js';

/** What the API needs from the server. */
export interface AppOptions {
  store: Store;
  controller: Controller;
  secret: string;
  version: string;
}

/** Largest request body accepted (a report of 1000 measurements is about 400 KB). */
const MAX_BODY_BYTES = 4 << 20;

/** Max bytes of log one `GET .../logs` returns. */
const LOG_CHUNK_BYTES = 1 << 20;

/**
 * The HTTP API under /v1 (plus /metrics). Every /v1 route but health and the OpenAPI document
 * requires a bearer token; users see and change only their own jobs unless admin.
 */
export function createApp(o: AppOptions): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const { store, controller } = o;

  app.onError((error, c) => {
    const body = errorBody(error);
    return c.json(body, statusOf(body.error.code));
  });
  app.notFound((c) => c.json({ error: { code: 'E_NOT_FOUND', message: `no route ${c.req.method} ${c.req.path}` } }, 404));

  app.get('/v1/health', (c) => c.json({ ok: true, version: o.version }));
  app.get('/v1/openapi.json', (c) => c.json(openApiDocument(o.version)));
  app.get('/metrics', async (c) => c.text(await metricsText(store, controller), 200, { 'content-type': 'text/plain; version=0.0.4' }));

  app.use('/v1/*', authenticate(store, o.secret));
  app.use('/v1/*', limitBody(MAX_BODY_BYTES));

  const findJob = async (c: Context<ApiEnv>, ref: string): Promise<JobRecord> => {
    const principal = c.get('principal');
    let job = await store.getJob(ref);
    if (!job && principal.kind === 'user') {
      const named = (await store.listJobs(principal.admin ? {} : { user: principal.user })).filter((j) => j.name === ref);
      job = named[named.length - 1];
    }
    if (!job) throw new GoodputError('E_NOT_FOUND', `no job '${ref}'`);
    if (!mayAccess(principal, job.user, job.id)) {
      if (principal.kind === 'job') throw forbidden(`this token belongs to job ${principal.job_id}, not ${job.id}`);
      throw forbidden(`job ${job.id} belongs to ${job.user}`);
    }
    return job;
  };

  app.post('/v1/jobs', async (c) => {
    const principal = requireUser(c.get('principal'));
    const body = await jsonBody(c);
    const spec = validateJobSpec(body, process.cwd(), 'job spec');
    if (spec.user !== undefined && spec.user !== principal.user && !principal.admin) throw forbidden(`user ${principal.user} cannot submit jobs as ${spec.user}`);
    if (!existsSync(spec.workdir) || !statSync(spec.workdir).isDirectory()) throw new GoodputError('E_SPEC', `job spec is invalid: workdir: ${spec.workdir} is not a directory on the server`);
    const user = principal.admin ? (spec.user ?? principal.user) : principal.user;
    const job = await controller.submit({ ...spec, user }, user, principal.user);
    return c.json(jobView(job), 201);
  });

  app.get('/v1/jobs', async (c) => {
    const principal = requireUser(c.get('principal'));
    const jobs = await store.listJobs(principal.admin && c.req.query('user') === undefined ? {} : { user: c.req.query('user') ?? principal.user });
    if (!principal.admin && c.req.query('user') !== undefined && c.req.query('user') !== principal.user) throw forbidden('only an admin may list other users\' jobs');
    return c.json(jobs.map(jobView));
  });

  app.get('/v1/jobs/:id', async (c) => {
    requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    const replicas = job.launches > 0 ? await store.listReplicas(job.id, job.launches - 1) : [];
    const detail: JobDetail = { ...jobView(job), current_replicas: replicas.map(replicaView), rejection: controller.rejections.get(job.id) ?? null, perf: job.perf, grad: job.grad, limits: job.limits, remaining_samples: job.remaining_samples };
    return c.json(detail);
  });

  app.get('/v1/jobs/:id/events', async (c) => {
    requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    return c.json((await store.listEvents(job.id)).map(eventView));
  });

  app.get('/v1/jobs/:id/reports', async (c) => {
    requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    const limit = Number(c.req.query('limit') ?? 1000);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw badRequest('limit must be an integer in [1, 100000]');
    return c.json(await store.listReports(job.id, limit));
  });

  app.get('/v1/jobs/:id/logs', async (c) => {
    requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    const replica = Number(c.req.query('replica') ?? 0);
    const offset = Number(c.req.query('offset') ?? 0);
    if (!Number.isInteger(replica) || replica < 0 || replica > 4096) throw badRequest('replica must be a replica rank (integer >= 0)');
    if (!Number.isInteger(offset) || offset < 0) throw badRequest('offset must be an integer >= 0');
    // The path is built from the job id and an integer only, so it cannot leave the job's directory.
    const path = join(controller.jobDir(job.id), 'logs', `replica-${replica}.log`);
    const size = existsSync(path) ? statSync(path).size : 0;
    const end = Math.min(size, offset + LOG_CHUNK_BYTES);
    const text = end > offset ? await readRange(path, offset, end) : '';
    return c.text(text, 200, { 'x-next-offset': String(Math.max(end, Math.min(offset, size))), 'x-job-state': job.state });
  });

  app.post('/v1/jobs/:id/cancel', async (c) => {
    const principal = requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    return c.json(jobView(await controller.cancel(job.id, principal.user)));
  });

  app.post('/v1/jobs/:id/reports', async (c) => {
    const principal: Principal = c.get('principal');
    const id = c.req.param('id');
    if (principal.kind === 'job' && principal.job_id !== id) throw forbidden(`this token belongs to job ${principal.job_id}, not ${id}`);
    if (principal.kind === 'user' && !principal.admin) throw forbidden('reports are posted with the job token (GOODPUT_TOKEN)');
    const body = parse(reportBodySchema, await jsonBody(c), 'report');
    const config = await controller.report(id, body.attempt, body.limits, body.reports);
    return c.json({ config });
  });

  app.get('/v1/nodes', (c) => {
    requireUser(c.get('principal'));
    return store.listJobs({ states: ['starting', 'running', 'rescaling'] }).then((jobs) => {
      const holder = new Map<number, string>();
      for (const j of jobs) for (const d of j.devices) holder.set(d, j.id);
      const nodes: NodeView[] = controller.nodes().map((n) => ({
        name: n.name,
        devices: controller.devices().map((d) => ({ index: d.index, kind: d.kind, name: d.name, job: holder.get(d.index) ?? null })),
      }));
      return c.json(nodes);
    });
  });

  app.post('/v1/tokens', async (c) => {
    const principal = requireUser(c.get('principal'));
    if (!principal.admin) throw forbidden('only an admin may create tokens');
    const body = parse(tokenBodySchema, await jsonBody(c), 'token request');
    const token = newToken('gpu');
    await store.putToken({ hash: hashToken(token), user: body.user, admin: false, created_at_ms: Date.now() });
    return c.json({ user: body.user, token }, 201);
  });

  return app;
}

/**
 * Refuses bodies whose Content-Length exceeds `max_bytes` (400). Reads only the header: hono's
 * bodyLimit touches `req.raw.body`, which makes @hono/node-server build a web stream for every
 * request. Bodies without Content-Length (chunked) are not limited here.
 */
function limitBody(max_bytes: number): MiddlewareHandler<ApiEnv> {
  return async function limitBodyByLength(c, next) {
    const length = Number(c.req.header('content-length') ?? 0);
    if (length > max_bytes) throw badRequest(`request body larger than ${max_bytes} bytes`);
    await next();
  };
}

async function jsonBody(c: Context<ApiEnv>): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw badRequest('body must be JSON');
  }
}

function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(`${what} is invalid: ${formatIssues(result.error)}`);
  return result.data;
}

function readRange(path: string, start: number, end: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    createReadStream(path, { start, end: end - 1 })
      .on('data', (chunk) => chunks.push(chunk as Buffer))
      .on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
      .on('error', reject);
  });
}
