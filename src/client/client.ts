/**
 * The one typed HTTP client of the control plane, used by the CLI, the tests and the bench.
 * Every non-2xx answer becomes a GoodputError carrying the server's code and message.
 */
import type { RanksView } from '../api/rank-views.js';
import type { DeviceMark } from '../control/ranks/device-health.js';
import type { BulkCancelView } from '../api/bulk-cancel-schema.js';
import type { ProfileSummaryView, ProfileView } from '../api/profile-routes.js';
import type { TokenView } from '../api/token-routes.js';
import { routeRequest, type ApiBody, type ApiResponse, type ApiRoute } from '../api/contract.js';
import type { DeviceView, EventView, JobDetail, JobSummary, NodeView, SubmittedJob } from '../api/views.js';
import { GoodputError, toErrorCode, type ErrorCode } from '../core/errors.js';
import type { JobSpecInput } from '../core/job-spec.js';
import type { JobConfig, ReportBody } from '../core/wire.js';
import type { ReportRecord } from '../store/types.js';

export type {
  DeviceView,
  EventView,
  JobDetail,
  JobSummary,
  NodeView,
  SubmittedJob,
  ProfileSummaryView,
  ProfileView,
  TokenView,
};

export type { ReportBody };

/**
 * The routes whose answers have a zod schema (api/response-schemas.ts `RESPONSE_SCHEMAS`; a test
 * keeps the two equal). The schemas, and zod with them, are loaded only when one of these is
 * called: zod was about 40 ms of every CLI call's start (`goodput ls` at 16,384 GPUs, issue #49).
 */
export const CHECKED_ROUTES: ReadonlySet<string> = new Set(['GET /v1/health', 'POST /v1/jobs/{id}/reports']);

/** Filters of `GET /v1/jobs` (docs/control-plane.md): states or groups comma-separated, `since` an ISO time or an age (24h). */
export interface JobFilter {
  state?: string;
  user?: string;
  name?: string;
  since?: string;
}

/** A chunk of a replica log. */
export interface LogChunk {
  text: string;
  next_offset: number;
  state: string;
}

/** What `submit` accepts: the spec as a user writes it (core/job-spec.ts), defaults applied by the server. */
export type { JobSpecInput };

export class GoodputClient {
  readonly base_url: string;
  private readonly token: string | undefined;

  constructor(base_url: string, token?: string) {
    this.base_url = base_url.replace(/\/+$/, '');
    this.token = token;
  }

  health(): Promise<ApiResponse<'GET /v1/health'>> {
    return this.call('GET /v1/health');
  }
  /** Submits a job; with `idempotency_key`, a retry of the same submit returns the job its first attempt created. */
  submit(spec: JobSpecInput, options: { idempotency_key?: string } = {}): Promise<SubmittedJob> {
    return this.call(
      'POST /v1/jobs',
      {},
      {},
      spec,
      options.idempotency_key === undefined ? {} : { 'idempotency-key': options.idempotency_key },
    );
  }
  /** Every job matching `filter`, oldest first (follows the pages). */
  async listJobs(filter: JobFilter = {}): Promise<JobSummary[]> {
    const jobs: JobSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.listJobsPage({
        ...filter,
        order: 'asc',
        limit: 1000,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      jobs.push(...page.jobs);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return jobs;
  }
  /** One page of `GET /v1/jobs` (newest first unless `order: 'asc'`). */
  async listJobsPage(
    filter: JobFilter & { limit?: number; cursor?: string; order?: 'asc' | 'desc' } = {},
  ): Promise<{ jobs: JobSummary[]; next_cursor: string | null }> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(filter)) if (v !== undefined) params.set(k, String(v));
    const query = params.toString();
    const res = await this.request('GET', `/v1/jobs${query ? `?${query}` : ''}`);
    const text = await res.text();
    if (!res.ok) throw toError(res.status, text);
    return { jobs: JSON.parse(text) as JobSummary[], next_cursor: res.headers.get('x-next-cursor') };
  }
  getJob(ref: string): Promise<JobDetail> {
    return this.call('GET /v1/jobs/{id}', { id: ref });
  }
  events(ref: string): Promise<EventView[]> {
    return this.call('GET /v1/jobs/{id}/events', { id: ref });
  }
  reports(ref: string, limit = 1000): Promise<ReportRecord[]> {
    return this.call('GET /v1/jobs/{id}/reports', { id: ref }, { limit });
  }
  cancel(ref: string): Promise<JobSummary> {
    return this.call('POST /v1/jobs/{id}/cancel', { id: ref });
  }
  /** Cancels every job matching `filter` in one call (own jobs; other users': admin); answers the count and the jobs. */
  cancelMatching(filter: { user?: string; state?: string; name?: string }): Promise<BulkCancelView> {
    return this.call('POST /v1/jobs/cancel', {}, {}, filter);
  }
  nodes(): Promise<NodeView[]> {
    return this.call('GET /v1/nodes');
  }
  /** Each rank of a job now, the straggler and hang verdicts, and its replicas' process facts. */
  ranks(ref: string): Promise<RanksView> {
    return this.call('GET /v1/jobs/{id}/ranks', { id: ref });
  }
  /** Clears the slow or drained marks of a node's devices (all, or `device`; admin). */
  clearNode(node: string, device?: number): Promise<{ cleared: DeviceMark[] }> {
    return this.call('POST /v1/nodes/clear', {}, {}, { node, ...(device !== undefined ? { device } : {}) });
  }
  /** A new user token (shown once). `user` default: the caller; `unix_user`, `slurm_account`: admin only. */
  createToken(
    user?: string,
    options: { expires_in_s?: number; unix_user?: string; slurm_account?: string } = {},
  ): Promise<TokenView & { token: string }> {
    return this.call('POST /v1/tokens', {}, {}, { ...(user !== undefined ? { user } : {}), ...options });
  }
  listTokens(user?: string): Promise<TokenView[]> {
    return this.call('GET /v1/tokens', {}, { user });
  }
  revokeToken(id: string): Promise<TokenView> {
    return this.call('DELETE /v1/tokens/{id}', { id });
  }
  /** Profiles of profile keys (those of the caller's jobs; admin: all). */
  profiles(): Promise<ProfileSummaryView[]> {
    return this.call('GET /v1/profiles');
  }
  /** One profile key, one entry per GPU type. */
  profile(key: string): Promise<ProfileView[]> {
    return this.call('GET /v1/profiles/{key}', { key });
  }
  /** Removes a key's profile (all GPU types, or one); answers the removed ones. */
  deleteProfile(key: string, gpu_type?: string): Promise<ProfileSummaryView[]> {
    return this.call('DELETE /v1/profiles/{key}', { key }, { gpu_type });
  }
  report(job_id: string, body: ReportBody): Promise<{ config: JobConfig }> {
    return this.call('POST /v1/jobs/{id}/reports', { id: job_id }, {}, body);
  }

  /**
   * One route of the API contract (api/contract.ts): its answer as the contract types it,
   * checked against the route's zod schema where it has one (api/response-schemas.ts).
   */
  async call<R extends ApiRoute>(
    route: R,
    params: Readonly<Record<string, string>> = {},
    query: Readonly<Record<string, string | number | undefined>> = {},
    body?: ApiBody<R>,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<ApiResponse<R>> {
    const { method, path } = routeRequest(route, params, query);
    const res = await this.request(method, path, body, headers);
    const text = await res.text();
    if (!res.ok) throw toError(res.status, text);
    const value: unknown = JSON.parse(text);
    const schema = CHECKED_ROUTES.has(route)
      ? (await import('../api/response-schemas.js')).RESPONSE_SCHEMAS[route]
      : undefined;
    if (schema) {
      const checked = schema.safeParse(value);
      if (!checked.success)
        throw new GoodputError(
          'E_HTTP',
          `${route}: the server's answer does not match the API contract: ${checked.error.message}`,
        );
    }
    return value as ApiResponse<R>;
  }

  async logs(ref: string, replica: number, offset: number): Promise<LogChunk> {
    const res = await this.request(
      'GET',
      `/v1/jobs/${encodeURIComponent(ref)}/logs?replica=${replica}&offset=${offset}`,
    );
    const text = await res.text();
    if (!res.ok) throw toError(res.status, text);
    return {
      text,
      next_offset: Number(res.headers.get('x-next-offset') ?? offset),
      state: res.headers.get('x-job-state') ?? '',
    };
  }

  /** Each team's quota, use, borrowed and lent devices, fair-share factor, decayed usage (issue 48). */
  shares(): Promise<ApiResponse<'GET /v1/shares'>> {
    return this.call('GET /v1/shares');
  }
  /** Device-hours per user, team and GPU type since `since_ms` (own; admin: everyone). */
  usage(since_ms: number): Promise<ApiResponse<'GET /v1/usage'>> {
    return this.call('GET /v1/usage', {}, { since_ms });
  }

  /** Raw metrics text. */
  async metrics(): Promise<string> {
    const res = await this.request('GET', '/metrics');
    return res.text();
  }

  /**
   * A login code of the dashboard at `dashboard_url` (same token, short-lived, single use;
   * dashboard/login-link.ts): `goodput dashboard` puts it in a link's fragment.
   */
  async dashboardLoginCode(dashboard_url: string): Promise<{ code: string; expires_in_s: number }> {
    let res: Response;
    try {
      res = await fetch(`${dashboard_url.replace(/\/+$/, '')}/dash/login-link`, {
        method: 'POST',
        headers: this.token ? { authorization: `Bearer ${this.token}` } : {},
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new GoodputError(
        'E_SERVER_DOWN',
        `cannot reach the dashboard at ${dashboard_url} (${cause}); is 'goodput up' running with its dashboard?`,
      );
    }
    const text = await res.text();
    if (!res.ok) throw toError(res.status, text);
    return JSON.parse(text) as { code: string; expires_in_s: number };
  }

  private async request(
    method: string,
    path: string,
    body?: unknown,
    extra: Readonly<Record<string, string>> = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...extra };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(this.base_url + path, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new GoodputError(
        'E_SERVER_DOWN',
        `cannot reach the goodput server at ${this.base_url} (${cause}); start it with 'goodput up'`,
      );
    }
  }
}

/** HTTP status of the last error, for callers that branch on it (tests). */
export class HttpError extends GoodputError {
  readonly status: number;
  constructor(status: number, code: ErrorCode, message: string) {
    super(code, message);
    this.status = status;
  }
}

function toError(status: number, text: string): HttpError {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.code)
      return new HttpError(status, toErrorCode(body.error.code, 'E_HTTP'), body.error.message ?? `HTTP ${status}`);
  } catch {
    // not JSON: fall through
  }
  return new HttpError(status, 'E_HTTP', `HTTP ${status}: ${text.slice(0, 200)}`);
}
