/** The OpenAPI 3.1 document served at /v1/openapi.json (request schemas generated from zod). */
import { z } from 'zod';
import { jobSpecSchema } from '../core/job-spec.js';
import { reportBodySchema, tokenBodySchema } from '../core/wire.js';
import { bulkCancelBodySchema } from './bulk-cancel-schema.js';
import { reportResponseSchema } from './response-schemas.js';
import { rankSummaryBodySchema } from '../core/rank-wire.js';
import { nodeClearBodySchema } from './rank-views.js';

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const error = { description: 'error', ...json({ $ref: '#/components/schemas/Error' }) };
const errors = { 400: error, 401: error, 403: error, 404: error };
const idParam = [
  {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: 'job id (or name, latest job of that name)',
  },
];
const ok = (description: string, schema: unknown = { type: 'object' }) => ({ description, ...json(schema) });

let cached: Record<string, unknown> | undefined;

/** The document (built once per process). */
export function openApiDocument(version: string): Record<string, unknown> {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'Goodput control plane',
      version,
      description:
        'Jobs, reports (docs/contract.md), nodes, profiles. Bearer-token auth on every /v1 route except health and this document.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              properties: { code: { type: 'string' }, message: { type: 'string' } },
              required: ['code', 'message'],
            },
          },
        },
        JobSpec: z.toJSONSchema(jobSpecSchema, { io: 'input', unrepresentable: 'any' }),
        ReportBody: z.toJSONSchema(reportBodySchema, { io: 'input', unrepresentable: 'any' }),
        TokenRequest: z.toJSONSchema(tokenBodySchema, { io: 'input', unrepresentable: 'any' }),
        CancelFilter: z.toJSONSchema(bulkCancelBodySchema, { io: 'input', unrepresentable: 'any' }),
        RankSummary: z.toJSONSchema(rankSummaryBodySchema, { io: 'input', unrepresentable: 'any' }),
        NodeClear: z.toJSONSchema(nodeClearBodySchema, { io: 'input', unrepresentable: 'any' }),
        ReportResponse: z.toJSONSchema(reportResponseSchema),
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/health': {
        get: {
          summary: "Liveness and the store's state (store.state: ok, damaged or failing)",
          security: [],
          responses: {
            200: ok('server and store are up'),
            503: { description: 'the store is damaged or failing (store.detail says why)' },
          },
        },
      },
      '/v1/jobs': {
        get: {
          summary:
            'List jobs, one page, newest first (own jobs; admin: all, or ?user=). Query: state (states ' +
            'or active/finished, comma-separated), user, name, since (ISO time or age: 24h), limit ' +
            '(1-1000, default 100), cursor (from the X-Next-Cursor header of the previous page), order ' +
            '(asc|desc)',
          responses: { 200: ok('jobs', { type: 'array', items: { type: 'object' } }), ...errors },
        },
        post: {
          summary: 'Submit a job (422 E_INFEASIBLE: min_replicas exceeds the cluster)',
          requestBody: json({ $ref: '#/components/schemas/JobSpec' }),
          responses: {
            201: ok('the job, with notes: what the user is told about it (warnings start with "warning: ")'),
            ...errors,
            422: error,
          },
        },
      },
      '/v1/jobs/{id}': {
        get: {
          summary: 'A job with its current replicas',
          parameters: idParam,
          responses: { 200: ok('job detail'), ...errors },
        },
      },
      '/v1/jobs/{id}/events': {
        get: {
          summary: "A job's event history (who, when, why)",
          parameters: idParam,
          responses: { 200: ok('events', { type: 'array' }), ...errors },
        },
      },
      '/v1/jobs/{id}/reports': {
        get: {
          summary: "A job's latest measurements",
          parameters: idParam,
          responses: { 200: ok('measurements', { type: 'array' }), ...errors },
        },
        post: {
          summary: 'Report measurements (job token); answers the configuration to use (409: the job has ended)',
          parameters: idParam,
          requestBody: json({ $ref: '#/components/schemas/ReportBody' }),
          responses: {
            200: ok('configuration', { $ref: '#/components/schemas/ReportResponse' }),
            ...errors,
            409: error,
          },
        },
      },
      '/v1/jobs/{id}/logs': {
        get: {
          summary:
            "A chunk of a replica log from a byte offset; x-next-offset tells where to continue (404 for a rank at or above the spec's max_replicas)",
          parameters: [
            ...idParam,
            { name: 'replica', in: 'query', schema: { type: 'integer' } },
            { name: 'offset', in: 'query', schema: { type: 'integer' } },
          ],
          responses: {
            200: { description: 'log text', content: { 'text/plain': { schema: { type: 'string' } } } },
            ...errors,
          },
        },
      },
      '/v1/jobs/{id}/cancel': {
        post: {
          summary: 'Cancel a job (SIGTERM, then SIGKILL after the grace period)',
          parameters: idParam,
          responses: { 200: ok('the job'), ...errors },
        },
      },
      '/v1/jobs/cancel': {
        post: {
          summary:
            'Cancel every job matching a filter (user, state, name; at least one) in one transaction: ' +
            "own jobs; another user's or everyone's: admin. Answers the count and the jobs",
          requestBody: json({ $ref: '#/components/schemas/CancelFilter' }),
          responses: { 200: ok('{cancelled, jobs: [{id, name, user, from}]}'), ...errors },
        },
      },
      '/v1/jobs/{id}/ranks': {
        post: {
          summary:
            "One rank's summary of its recent steps (every rank of an SDK job, every 2 s; job token): " +
            'the live straggler and hang verdicts read them (docs/doctor.md)',
          parameters: idParam,
          requestBody: json({ $ref: '#/components/schemas/RankSummary' }),
          responses: { 200: ok('{ok: true}'), ...errors },
        },
        get: {
          summary: "Each rank now, the straggler and hang verdicts, and the replicas' process facts",
          parameters: idParam,
          responses: { 200: ok('{attempt, ranks, straggler, hang, processes}'), ...errors },
        },
      },
      '/v1/nodes/clear': {
        post: {
          summary: "Clear the slow or drained marks of a node's devices (admin)",
          requestBody: json({ $ref: '#/components/schemas/NodeClear' }),
          responses: { 200: ok('{cleared}'), ...errors },
        },
      },
      '/v1/nodes': {
        get: {
          summary: 'Nodes and their devices with the job holding each',
          responses: { 200: ok('nodes', { type: 'array' }), ...errors },
        },
      },
      '/v1/shares': {
        get: {
          summary:
            "Each team's quota, use, borrowed and lent devices per GPU type, fair-share factor and decayed usage",
          responses: { 200: ok('teams', { type: 'array' }), ...errors },
        },
      },
      '/v1/usage': {
        get: {
          summary: 'Device-hours per user, team and GPU type since ?since_ms= (own; admin: everyone)',
          responses: { 200: ok('rows {user, team, gpu_type, device_hours}', { type: 'array' }), ...errors },
        },
      },
      '/v1/tokens': {
        post: {
          summary: 'Create a user token (a user for themself; an admin for anyone, optionally with the Unix account)',
          requestBody: json({ $ref: '#/components/schemas/TokenRequest' }),
          responses: { 201: ok('the token, shown once, and its id'), ...errors },
        },
        get: {
          summary: 'Tokens by id, never the tokens (own; admin: all or ?user=)',
          responses: { 200: ok('tokens', { type: 'array' }), ...errors },
        },
      },
      '/v1/tokens/{id}': {
        delete: {
          summary: 'Revoke a token (own; admin: any user token); an id prefix of 6+ characters',
          parameters: idParam,
          responses: { 200: ok('the revoked token'), ...errors },
        },
      },
      '/v1/profiles': {
        get: {
          summary:
            "Profiles of profile keys: per key and GPU type the jobs, measured sizes and fitted throughput (keys of the caller's jobs; admin: all)",
          responses: { 200: ok('profiles', { type: 'array', items: { type: 'object' } }), ...errors },
        },
      },
      '/v1/profiles/{key}': {
        get: {
          summary:
            'One profile key, per GPU type: its points, fitted throughput parameters, gradient ' +
            'trajectory and limits (404 E_NOT_FOUND: no job of the caller uses it, or none has ' +
            'reported)',
          parameters: [
            {
              name: 'key',
              in: 'path',
              required: true,
              schema: { type: 'string' },
              description: 'profile key (spec profile or its default)',
            },
          ],
          responses: { 200: ok('the profile per GPU type', { type: 'array', items: { type: 'object' } }), ...errors },
        },
        delete: {
          summary:
            "Remove a key's profile (all GPU types, or ?gpu_type=): jobs of the key then start from " +
            "nothing until one reports again. A user removes only profiles that hold their own jobs' " +
            'measurements alone (403 E_FORBIDDEN otherwise); admin: any',
          parameters: [
            { name: 'key', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'gpu_type', in: 'query', schema: { type: 'string' } },
          ],
          responses: {
            200: ok('the removed profiles (summaries)', { type: 'array', items: { type: 'object' } }),
            ...errors,
          },
        },
      },
      '/metrics': {
        get: { summary: 'Prometheus metrics', security: [], responses: { 200: { description: 'text exposition' } } },
      },
    },
  };
  return cached;
}
