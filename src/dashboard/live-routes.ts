/**
 * The dashboard's own read endpoints on a live control plane (`/dash/...`): the views the API
 * has no single call for (a jobs table with goodput, a job's time series, the cluster with its
 * allocation timeline). Authenticated by the API's own middleware and tokens; users see only
 * their jobs (admins all), exactly as under /v1.
 */
import { Hono } from 'hono';
import { authenticate, mayAccess, requireUser, type ApiEnv, type Principal } from '../api/auth.js';
import { badRequest } from '../api/http-error.js';
import { jobListQuery, readPage } from '../api/job-list.js';
import type { NodeView } from '../api/views.js';
import { GoodputError } from '../core/errors.js';
import type { Rejection } from '../policy/policy.js';
import type { Store } from '../store/store.js';
import { PLACED_STATES, TERMINAL_STATES } from '../store/lifecycle.js';
import type { JobRecord, JobState, StoredKeyProfile } from '../store/types.js';
import { jobRow, jobSeries } from './job-metrics.js';
import { LoginLinks, registerLoginExchange, registerLoginLinkIssue } from './login-link.js';
import { registerPlanRoute } from './plan-route.js';
import { liveTimeline } from './timeline.js';
import type { ClusterNode, ClusterResponse, JobsResponse, WhoAmI } from './types.js';

/** What the live endpoints read. */
export interface LiveSources {
  store: Store;
  /** Server secret (job tokens are checked by HMAC, as in the API). */
  secret: string;
  /**
   * The devices and their holders, as `GET /v1/nodes` answers `principal` (api/node-views.ts);
   * `placed`: the jobs in PLACED_STATES, already read by the caller.
   */
  nodes: (principal: Principal, placed: readonly JobRecord[]) => Promise<NodeView[]>;
  /** The profile each job's model starts from (Controller.profilesFor); none when absent. */
  profiles?: (jobs: readonly JobRecord[]) => Promise<ReadonlyMap<string, StoredKeyProfile>>;
  /** The policy's latest refusal for a waiting job, if any. */
  rejection?: (job_id: string) => Rejection | undefined;
  /** The server's data directory (the plan page reads the memory profiles `goodput profile` keeps there). */
  data_dir?: string;
  now?: () => number;
}

const HOUR_MS = 3_600_000;
/** States of jobs that may hold a device or have run: a queued job (never started) has nothing to draw. */
const DRAWN_STATES: readonly JobState[] = [...PLACED_STATES, 'preempted', ...TERMINAL_STATES];

/** Routes under /dash for a live server. */
export function liveRoutes(s: LiveSources): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const now = s.now ?? Date.now;
  const links = new LoginLinks(now);
  registerLoginExchange(app, links);
  app.use('/dash/*', authenticate(s.store, s.secret));
  registerLoginLinkIssue(app, links);

  app.get('/dash/me', (c) => {
    const p = requireUser(c.get('principal'));
    return c.json<WhoAmI>({ user: p.user, admin: p.admin });
  });

  app.get('/dash/jobs', async (c) => {
    const p = requireUser(c.get('principal'));
    const now_ms = now();
    // One page, as GET /v1/jobs pages (newest first): the table stays cheap whatever the store holds.
    const page = await readPage(
      s.store,
      jobListQuery((k) => c.req.query(k), p, now_ms),
      async (jobs) => {
        const profiles =
          (await s.profiles?.(jobs.filter((j) => j.state === 'running'))) ?? new Map<string, StoredKeyProfile>();
        const rows = [];
        for (const job of jobs) {
          const latest = job.last_report_at_ms === null ? undefined : (await s.store.listReports(job.id, 1))[0];
          rows.push(jobRow(job, latest, s.rejection?.(job.id), now_ms, profiles.get(job.id)));
        }
        return rows;
      },
    );
    return c.json<JobsResponse>({ now_ms, rows: page.views, next_cursor: page.next_cursor });
  });

  app.get('/dash/jobs/:id/series', async (c) => {
    const principal = c.get('principal');
    requireUser(principal);
    const job = await s.store.getJob(c.req.param('id'));
    if (!job) throw new GoodputError('E_NOT_FOUND', `no job '${c.req.param('id')}'`);
    if (!mayAccess(principal, job.user, job.id)) throw new GoodputError('E_NOT_FOUND', `no job '${c.req.param('id')}'`);
    const limit = Number(c.req.query('limit') ?? 5000);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100_000)
      throw badRequest('limit must be an integer in [1, 100000]');
    return c.json(
      jobSeries(await s.store.listReports(job.id, limit), job.limits?.init_batch_size, job.state === 'running'),
    );
  });

  app.get('/dash/cluster', async (c) => {
    const principal = c.get('principal');
    const p = requireUser(principal);
    const hours = Number(c.req.query('hours') ?? 3);
    if (!(hours > 0 && hours <= 24 * 14)) throw badRequest('hours must be a number in (0, 336]');
    const now_ms = now();
    // Only the jobs the page can draw: those holding devices and those that ran in the window
    // (never the whole history: the page polls every few seconds).
    const from_ms = now_ms - hours * HOUR_MS;
    const drawn = { states: DRAWN_STATES, ended_since_ms: from_ms };
    const jobs = await s.store.listJobs(drawn);
    // The placed jobs the node views need are among those drawn: one read for both.
    const views = await s.nodes(
      principal,
      jobs.filter((j) => PLACED_STATES.includes(j.state)),
    );
    const byId = new Map(jobs.map((j) => [j.id, j]));
    const visible = (j: JobRecord) => p.admin || j.user === p.user;
    const holders: ClusterResponse['holders'] = {};
    const clusterDevice = (d: NodeView['devices'][number]): ClusterNode['devices'][number] => {
      const job = d.job === null ? undefined : byId.get(d.job);
      if (d.job === null)
        return {
          index: d.index,
          kind: d.kind,
          name: d.name,
          use: d.busy ? ('other' as const) : ('free' as const),
          job: null,
        };
      if (!job) return { index: d.index, kind: d.kind, name: d.name, use: 'foreign' as const, job: null };
      if (!visible(job)) return { index: d.index, kind: d.kind, name: d.name, use: 'other' as const, job: null };
      holders[job.id] = { name: job.name, user: job.user, state: job.state };
      return { index: d.index, kind: d.kind, name: d.name, use: 'job' as const, job: job.id };
    };
    const nodes: ClusterNode[] = views.map((n) => ({
      name: n.name,
      gpu_types: n.gpu_types,
      devices: n.devices.map((d) => ({ ...clusterDevice(d), ...(d.mark ? { mark: d.mark } : {}) })),
    }));
    const timeline = await liveTimeline(s.store, jobs, nodes, visible, from_ms, now_ms);
    return c.json<ClusterResponse>({ now_ms, nodes, holders, timeline });
  });

  registerPlanRoute(app, s.store, s.data_dir);

  return app;
}
