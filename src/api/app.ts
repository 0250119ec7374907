import { createReadStream, existsSync, statSync } from 'node:fs';
import { Hono, type Context } from 'hono';
import type { RunAs } from '../backends/backend.js';
import type { Controller } from '../control/controller.js';
import { gpuTypeOf } from '../control/reports/profile-book.js';
import { replicaLogPath } from '../backends/run-files.js';
import { validateJobSpec } from '../admission/job-spec-file.js';
import { batchDecisionInForce } from '../control/loop/insight.js';
import { stopProtection } from '../control/loop/snapshot.js';
import { GoodputError } from '../core/errors.js';
import type { Store } from '../store/store.js';
import { isTerminal } from '../store/lifecycle.js';
import type { JobRecord } from '../store/types.js';
import { limitBody } from './body-limit.js';
import { registerBulkCancel } from './bulk-cancel.js';
import { handleReport, MAX_BODY_BYTES } from './report-route.js';
import { jobListQuery, readPage } from './job-list.js';
import { authenticate, isAdminBearer, mayAccess, requireUser, type ApiEnv } from './auth.js';
import { badRequest, errorBody, forbidden, statusOf } from './http-error.js';
import { metricsText } from './metrics.js';
import { openApiDocument } from './openapi.js';
import { jsonBody } from './parse-body.js';
import { StoreHealth } from './store-health.js';
import { checkLaunchable } from '../admission/submit-checks.js';
import { registerProfileRoutes } from './profile-routes.js';
import { registerShareRoutes } from './share-routes.js';
import { registerRankRoutes } from './rank-routes.js';
import { registerTokenRoutes } from './token-routes.js';
import { nodeViews } from './node-views.js';
import { eventView, iso, jobView, replicaView, type JobDetail, type SubmittedJob } from './views.js';

/** What the API needs from the server. */
export interface AppOptions {
  store: Store;
  controller: Controller;
  secret: string;
  version: string;
  /** Multi-user mode: jobs run as their owner's Unix account (checked at submit). */
  run_as_owner?: boolean;
  /** Multi-user mode: the backend's check of an owner's account at submit (Backend.checkOwner). */
  check_owner?: (account: RunAs, owner: string) => Promise<void>;
  /** Why the store's disk cannot take writes now (datadir/disk-space.ts diskFullNote); default: never full. */
  disk_full?: () => string | undefined;
  /** Clock for token expiry (tests). Default Date.now. */
  now_ms?: () => number;
}

/**
 * Largest job spec body: a valid spec holds at most 512 KiB of arguments and variables and 64 KiB
 * of env_setup (SPEC_LIMITS), so a larger body is refused by its Content-Length, before it is
 * read (a 3 MB spec was read, parsed and walked for 3 s).
 */
const MAX_SPEC_BODY_BYTES = 1 << 20;

/** Max bytes of log one `GET .../logs` returns. */
const LOG_CHUNK_BYTES = 1 << 20;

/**
 * The HTTP API under /v1 (plus /metrics). Every /v1 route but health and the OpenAPI document
 * requires a bearer token; users see and change only their own jobs unless admin.
 */
export function createApp(o: AppOptions): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const { store, controller } = o;

  const health = new StoreHealth(store, Date.now, o.disk_full);
  app.onError((error, c) => {
    const body = errorBody(health.note(error));
    return c.json(body, statusOf(body.error.code));
  });
  app.notFound((c) =>
    c.json({ error: { code: 'E_NOT_FOUND', message: `no route ${c.req.method} ${c.req.path}` } }, 404),
  );

  app.use('*', limitBody(MAX_BODY_BYTES));
  app.use('/v1/jobs', limitBody(MAX_SPEC_BODY_BYTES));
  app.get('/v1/health', async (c) => {
    const state = await health.state();
    return c.json({ ok: state.state === 'ok', version: o.version, store: state }, state.state === 'ok' ? 200 : 503);
  });
  app.get('/v1/openapi.json', (c) => c.json(openApiDocument(o.version)));
  // Open for the aggregate gauges; the per-job series (job ids, names, users) need the admin token.
  app.get('/metrics', async (c) =>
    c.text(
      await metricsText(store, controller, await isAdminBearer(store, c.req.header('authorization'), o.now_ms)),
      200,
      { 'content-type': 'text/plain; version=0.0.4' },
    ),
  );

  app.use('/v1/*', authenticate(store, o.secret, o.now_ms));

  const findJob = async (c: Context<ApiEnv>, ref: string): Promise<JobRecord> => {
    const principal = c.get('principal');
    let job = await store.getJob(ref);
    if (!job && principal.kind === 'user') {
      const named = (
        await store.listJobsPage({ name: ref, limit: 20, ...(principal.admin ? {} : { user: principal.user }) })
      ).jobs;
      // Never a silent pick among jobs that share the name: the caller chooses by id.
      if (named.length > 1)
        throw new GoodputError(
          'E_AMBIGUOUS',
          `${named.length === 20 ? 'at least 20' : named.length} jobs are named '${ref}': ` +
            `${named.map((j) => `${j.id} (${j.state})`).join(', ')}; give the job's id instead`,
        );
      job = named[0];
    }
    if (!job) throw new GoodputError('E_NOT_FOUND', `no job '${ref}'`);
    if (!mayAccess(principal, job.user, job.id)) {
      if (principal.kind === 'job') throw forbidden(`this token belongs to job ${principal.job_id}, not ${job.id}`);
      // As if it did not exist: another user's job ids are theirs to share.
      throw new GoodputError('E_NOT_FOUND', `no job '${ref}'`);
    }
    return job;
  };

  const latestReport = async (job_id: string) => (await store.listReports(job_id, 1))[0];

  app.post('/v1/jobs', async (c) => {
    const principal = requireUser(c.get('principal'));
    const body = await jsonBody(c, 'job spec');
    const spec = validateJobSpec(body, process.cwd(), 'job spec');
    if (spec.user !== undefined && spec.user !== principal.user && !principal.admin)
      throw forbidden(`user ${principal.user} cannot submit jobs as ${spec.user}`);
    const user = principal.admin ? (spec.user ?? principal.user) : principal.user;
    // A retried submit (same Idempotency-Key) gets the job its first attempt created.
    const key = c.req.header('idempotency-key');
    if (key !== undefined && !/^[A-Za-z0-9._:-]{1,128}$/.test(key))
      throw badRequest('the Idempotency-Key header must be 1-128 letters, digits, ., _, : or -');
    const earlier = key === undefined ? undefined : await store.jobForSubmitKey(user, key);
    // The notes were the first answer's; a replay says only that it is one.
    if (earlier)
      return c.json({ ...jobView(earlier), notes: [] } satisfies SubmittedJob, 200, { 'idempotent-replayed': 'true' });
    await checkLaunchable(store, spec, user, o.run_as_owner === true, o.check_owner);
    const { job, notes } = await controller.submitWithNotes({ ...spec, user }, user, principal.user, key);
    return c.json({ ...jobView(job), notes } satisfies SubmittedJob, 201);
  });

  app.get('/v1/jobs', async (c) => {
    const principal = requireUser(c.get('principal'));
    const query = jobListQuery((k) => c.req.query(k), principal, (o.now_ms ?? Date.now)());
    const { views, next_cursor } = await readPage(store, query, async (jobs) => {
      // Insights with the profile each model starts from, as the scheduler sizes the jobs.
      const profiles = await controller.profilesFor(jobs);
      const machines = controller.inventory();
      return Promise.all(
        jobs.map(async (j) =>
          jobView(
            j,
            j.last_report_at_ms === null ? undefined : await latestReport(j.id),
            profiles.get(j.id),
            undefined,
            j.allocation.length > 0 ? gpuTypeOf(j, machines) : null,
          ),
        ),
      );
    });
    if (next_cursor !== null) c.header('x-next-cursor', next_cursor);
    return c.json(views);
  });

  app.get('/v1/jobs/:id', async (c) => {
    requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    const replicas = job.launches > 0 ? await store.listReplicas(job.id, job.launches - 1) : [];
    const profile = (await controller.profilesFor([job])).get(job.id);
    const decision = batchDecisionInForce(job, await store.listEvents(job.id));
    const detail: JobDetail = {
      ...jobView(
        job,
        await latestReport(job.id),
        profile,
        decision,
        job.allocation.length > 0 ? gpuTypeOf(job, controller.inventory()) : null,
      ),
      device_kind: controller.inventory()[0]?.devices[0]?.kind ?? 'cpu',
      current_replicas: replicas.map(replicaView),
      rejection: controller.rejections.get(job.id) ?? null,
      launch_wait: controller.launchWaits.get(job.id) ?? null,
      kept: stopProtection(job) ?? null,
      checkpoint_at: iso(job.checkpoint_at_ms),
      perf: job.perf,
      grad: job.grad,
      limits: job.limits,
      remaining_samples: job.remaining_samples,
    };
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
    if (!Number.isInteger(limit) || limit < 1 || limit > 100_000)
      throw badRequest('limit must be an integer in [1, 100000]');
    return c.json(await store.listReports(job.id, limit));
  });

  app.get('/v1/jobs/:id/logs', async (c) => {
    requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    const replica = Number(c.req.query('replica') ?? 0);
    const offset = Number(c.req.query('offset') ?? 0);
    if (!Number.isInteger(replica) || replica < 0 || replica > 4096)
      throw badRequest('replica must be a replica rank (integer >= 0)');
    if (!Number.isInteger(offset) || offset < 0) throw badRequest('offset must be an integer >= 0');
    // Ranks the job may still reach have no log yet (empty); one it can never run is a mistake.
    const ranks = job.spec.max_replicas;
    if (replica >= ranks)
      throw new GoodputError(
        'E_NOT_FOUND',
        `job ${job.id} (${job.name}) runs at most ${ranks} replica(s), ranks 0..${ranks - 1}; there is no replica ${replica}`,
      );
    // The path is built from the job id and an integer only, so it cannot leave the job's directory.
    const path = replicaLogPath(controller.jobDir(job.id), replica);
    const size = existsSync(path) ? statSync(path).size : 0;
    const end = Math.min(size, offset + LOG_CHUNK_BYTES);
    const text = end > offset ? await readRange(path, offset, end) : '';
    return c.text(text, 200, {
      'x-next-offset': String(Math.max(end, Math.min(offset, size))),
      'x-job-state': job.state,
    });
  });

  registerBulkCancel(app, controller);

  app.post('/v1/jobs/:id/cancel', async (c) => {
    const principal = requireUser(c.get('principal'));
    const job = await findJob(c, c.req.param('id'));
    if (isTerminal(job.state)) {
      throw new GoodputError(
        'E_CONFLICT',
        `job ${job.id} (${job.name}) already ${job.state} at ${iso(job.finished_at_ms) ?? 'an unknown time'}; there is nothing to cancel`,
      );
    }
    return c.json(jobView(await controller.cancel(job.id, principal.user)));
  });

  // The one report handler, which `goodput profile` serves too (report-route.ts). The store checks
  // the report against the job in its transaction (core/report-issues.ts): an invalid one gets
  // 400, an ended job's 409.
  app.post('/v1/jobs/:id/reports', (c) => handleReport(c, (batch) => controller.report(batch)));

  registerRankRoutes(app, controller, findJob, o.now_ms ?? Date.now);

  app.get('/v1/nodes', async (c) => {
    const principal = c.get('principal');
    requireUser(principal);
    return c.json(await nodeViews(store, controller, principal));
  });

  registerTokenRoutes(app, store, o.now_ms);
  registerProfileRoutes(app, store);
  registerShareRoutes(app, store, controller, o.now_ms);

  return app;
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
