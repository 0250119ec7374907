/**
 * The API contract (contract.ts) against what the server serves: the routes the app registers,
 * the paths of the OpenAPI document at /v1/openapi.json and their request schemas, and answers
 * of a real server on a port, read by the CLI's client (which checks them against
 * response-schemas.ts).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serve, type ServerType } from '@hono/node-server';
import { z } from 'zod';
import { CHECKED_ROUTES, GoodputClient } from '../client/client.js';
import { jobSpecSchema } from '../core/job-spec.js';
import { reportBodySchema, tokenBodySchema } from '../core/wire.js';
import { bulkCancelBodySchema } from './bulk-cancel-schema.js';
import { API_ROUTES, routeRequest, type ApiRoute } from './contract.js';
import { healthSchema, reportResponseSchema, RESPONSE_SCHEMAS } from './response-schemas.js';
import { inProcessApi } from './testing/in-process.js';

/** Routes outside the JSON contract: the log text, the OpenAPI document itself, Prometheus text. */
const NOT_JSON = ['GET /v1/jobs/{id}/logs', 'GET /v1/openapi.json', 'GET /metrics'];

describe('the API contract is the API the server serves', () => {
  let api: Awaited<ReturnType<typeof inProcessApi>>;
  let server: ServerType;
  let client: GoodputClient;

  before(async () => {
    api = await inProcessApi();
    server = await new Promise<ServerType>((ready) => {
      const s = serve({ fetch: api.app.fetch, hostname: '127.0.0.1', port: 0 }, () => ready(s));
    });
    client = new GoodputClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, api.admin);
  });
  after(async () => {
    await new Promise((done) => server.close(done));
    await api.close();
  });

  it("the app registers exactly the contract's routes (and the non-JSON ones)", () => {
    const served = new Set(
      api.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    assert.deepEqual([...served].sort(), [...API_ROUTES, ...NOT_JSON].sort());
  });

  it('the OpenAPI document has every contract route, with the request schemas the contract types', async () => {
    const doc = (await api.call('GET', '/v1/openapi.json')).json as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>
      >;
      components: { schemas: Record<string, unknown> };
    };
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    assert.deepEqual(
      documented.sort(),
      [...API_ROUTES, ...NOT_JSON.filter((r) => r !== 'GET /v1/openapi.json')].sort(),
    );
    const bodies: Partial<Record<ApiRoute, [string, z.ZodType]>> = {
      'POST /v1/jobs': ['JobSpec', jobSpecSchema],
      'POST /v1/jobs/{id}/reports': ['ReportBody', reportBodySchema],
      'POST /v1/tokens': ['TokenRequest', tokenBodySchema],
      'POST /v1/jobs/cancel': ['CancelFilter', bulkCancelBodySchema],
    };
    for (const [route, [name, schema]] of Object.entries(bodies) as [ApiRoute, [string, z.ZodType]][]) {
      const [method, path] = route.split(' ') as [string, string];
      assert.equal(
        doc.paths[path]![method.toLowerCase()]!.requestBody!.content['application/json']!.schema.$ref,
        `#/components/schemas/${name}`,
        route,
      );
      assert.deepEqual(
        doc.components.schemas[name],
        z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }),
        `${route}: the published schema is the contract's`,
      );
    }
    const reportAnswer = doc.paths['/v1/jobs/{id}/reports']!.post as unknown as {
      responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }>;
    };
    assert.equal(
      reportAnswer.responses['200']!.content['application/json']!.schema.$ref,
      '#/components/schemas/ReportResponse',
    );
    assert.deepEqual(
      doc.components.schemas.ReportResponse,
      z.toJSONSchema(reportResponseSchema),
      "the answer's schema is the contract's",
    );
  });

  it('every operation on a path with {id} declares the id path parameter', async () => {
    const doc = (await api.call('GET', '/v1/openapi.json')).json as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const undeclared = Object.entries(doc.paths)
      .filter(([path]) => path.includes('{id}'))
      .flatMap(([path, methods]) =>
        Object.entries(methods)
          .filter(([, op]) => !op.parameters?.some((p) => p.in === 'path' && p.name === 'id'))
          .map(([method]) => `${method.toUpperCase()} ${path}`),
      );
    assert.deepEqual(undeclared, []);
  });

  it('the client reads real answers by the contract', async () => {
    assert.equal(healthSchema.safeParse(await client.health()).success, true);
    const job = await client.submit({
      name: 'c',
      command: ['python3', 'train.py'],
      workdir: '/tmp',
      check_script: false,
    });
    assert.equal((await client.getJob(job.id)).id, job.id);
    assert.deepEqual(
      (await client.listJobs()).map((j) => j.id),
      [job.id],
    );
    assert.ok(Array.isArray(await client.events(job.id)));
    assert.equal((await client.cancel(job.id)).state, 'cancelled');
    assert.deepEqual(routeRequest('DELETE /v1/profiles/{key}', { key: 'a b' }, { gpu_type: 'x', none: undefined }), {
      method: 'DELETE',
      path: '/v1/profiles/a%20b?gpu_type=x',
    });
  });

  it('the client checks every route with a response schema, loading the schemas only for those', () => {
    assert.deepEqual([...CHECKED_ROUTES].sort(), Object.keys(RESPONSE_SCHEMAS).sort());
  });
});

describe("the client's response check", () => {
  it('rejects an answer that does not match its route schema, with E_HTTP and the route', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: 'yes', version: 1 }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const bad = new GoodputClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'token');
      await assert.rejects(bad.health(), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'E_HTTP');
        assert.match(e.message, /GET \/v1\/health: the server's answer does not match the API contract/);
        return true;
      });
    } finally {
      server.close();
    }
  });
});
