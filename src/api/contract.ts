/**
 * The HTTP API's contract in one place: per route, its request body and its answer. The CLI's
 * client (client/client.ts) and the dashboard (web/api.ts) are typed by it; request bodies and
 * the answers that have a schema are zod schemas (types by z.infer; response-schemas.ts), the
 * same the server validates with and openapi.ts publishes; contract.test.ts checks that the
 * routes here, the routes the app serves and the OpenAPI document's paths are the same. No
 * runtime import of zod here: the dashboard's bundle imports this module.
 */
import type { z } from 'zod';
import type { JobSpecInput } from '../core/job-spec.js';
import type { ReportBody, tokenBodySchema } from '../core/wire.js';
import type { ReportRecord } from '../store/types.js';
import type { TeamView } from '../policy/shares/view.js';
import type { UsageRow } from './usage-row.js';
import type { DeviceMark } from '../control/ranks/device-mark.js';
import type { RankSummaryBody } from '../core/rank-wire.js';
import type { nodeClearBodySchema, RanksView } from './rank-views.js';
import type { BulkCancelView, bulkCancelBodySchema } from './bulk-cancel-schema.js';
import type { healthSchema, reportResponseSchema } from './response-schemas.js';
import type {
  EventView,
  JobDetail,
  JobSummary,
  NodeView,
  ProfileSummaryView,
  ProfileView,
  SubmittedJob,
  TokenView,
} from './views.js';

/** Route -> request body (absent: none) and answer (JSON). Path parameters are written `{name}`. */
export interface ApiContract {
  'GET /v1/health': { response: z.infer<typeof healthSchema> };
  'GET /v1/jobs': { response: JobSummary[] };
  'POST /v1/jobs': { body: JobSpecInput; response: SubmittedJob };
  'GET /v1/jobs/{id}': { response: JobDetail };
  'GET /v1/jobs/{id}/events': { response: EventView[] };
  'GET /v1/jobs/{id}/reports': { response: ReportRecord[] };
  'POST /v1/jobs/{id}/reports': { body: ReportBody; response: z.infer<typeof reportResponseSchema> };
  'POST /v1/jobs/{id}/cancel': { response: JobSummary };
  'POST /v1/jobs/cancel': { body: z.input<typeof bulkCancelBodySchema>; response: BulkCancelView };
  'GET /v1/nodes': { response: NodeView[] };
  'POST /v1/jobs/{id}/ranks': { body: RankSummaryBody; response: { ok: true } };
  'GET /v1/jobs/{id}/ranks': { response: RanksView };
  'POST /v1/nodes/clear': { body: z.input<typeof nodeClearBodySchema>; response: { cleared: DeviceMark[] } };
  'POST /v1/tokens': { body: z.input<typeof tokenBodySchema>; response: TokenView & { token: string } };
  'GET /v1/tokens': { response: TokenView[] };
  'DELETE /v1/tokens/{id}': { response: TokenView };
  'GET /v1/profiles': { response: ProfileSummaryView[] };
  'GET /v1/profiles/{key}': { response: ProfileView[] };
  'DELETE /v1/profiles/{key}': { response: ProfileSummaryView[] };
  'GET /v1/shares': { response: TeamView[] };
  'GET /v1/usage': { response: UsageRow[] };
}

/** A route of the contract: `METHOD /path`. */
export type ApiRoute = keyof ApiContract;

/** The answer of a route. */
export type ApiResponse<R extends ApiRoute> = ApiContract[R]['response'];

/** The request body of a route (undefined for routes without one). */
export type ApiBody<R extends ApiRoute> = ApiContract[R] extends { body: infer B } ? B : undefined;

/**
 * Every route of the contract at run time (the record's keys must be exactly ApiRoute); routes
 * outside the JSON contract (logs as text, the OpenAPI document, /metrics) are not listed.
 */
export const API_ROUTES = Object.keys({
  'GET /v1/health': 1,
  'GET /v1/jobs': 1,
  'POST /v1/jobs': 1,
  'GET /v1/jobs/{id}': 1,
  'GET /v1/jobs/{id}/events': 1,
  'GET /v1/jobs/{id}/reports': 1,
  'POST /v1/jobs/{id}/reports': 1,
  'POST /v1/jobs/{id}/cancel': 1,
  'GET /v1/nodes': 1,
  'POST /v1/jobs/{id}/ranks': 1,
  'GET /v1/jobs/{id}/ranks': 1,
  'POST /v1/nodes/clear': 1,
  'POST /v1/tokens': 1,
  'GET /v1/tokens': 1,
  'DELETE /v1/tokens/{id}': 1,
  'GET /v1/profiles': 1,
  'GET /v1/profiles/{key}': 1,
  'DELETE /v1/profiles/{key}': 1,
  'POST /v1/jobs/cancel': 1,
  'GET /v1/shares': 1,
  'GET /v1/usage': 1,
} satisfies Record<ApiRoute, 1>) as ApiRoute[];

/**
 * The method and path of `route` with its `{name}` parameters filled in (URI-encoded) and an
 * optional query (undefined values left out).
 */
export function routeRequest(
  route: ApiRoute,
  params: Readonly<Record<string, string>> = {},
  query: Readonly<Record<string, string | number | undefined>> = {},
): { method: string; path: string } {
  const [method, template] = route.split(' ') as [string, string];
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`route ${route}: missing parameter ${name}`);
    return encodeURIComponent(value);
  });
  const q = Object.entries(query).filter((e): e is [string, string | number] => e[1] !== undefined);
  return {
    method,
    path: q.length === 0 ? path : `${path}?${q.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&')}`,
  };
}
