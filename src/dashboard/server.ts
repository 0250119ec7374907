/**
 * The dashboard's HTTP server: the browser assets, the dashboard's read endpoints (/dash/...)
 * and, on a live control plane, the API itself (/v1/... forwarded to the API server), so the
 * browser talks to one origin and one port — the one to forward through an SSH tunnel.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { compress } from 'hono/compress';
import type { ApiEnv } from '../api/auth.js';
import { badRequest, errorBody, statusOf } from '../api/http-error.js';
import { GoodputError } from '../core/errors.js';
import { loadAssets, type Asset } from './assets.js';
import { liveRoutes, type LiveSources } from './live-routes.js';
import type { DashboardConfig, SimResponse } from './types.js';

export interface DashboardOptions {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** A live control plane: its API's URL (for /v1) and what /dash reads. */
  live?: LiveSources & { api_url: string };
  /** Recorded simulations (`goodput view`). */
  sim?: SimResponse;
  /** Asset folder (default: the package's dist/web). */
  asset_dir?: string;
}

export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

/** The dashboard app (exported for in-process use by tests and the bench). */
export function dashboardApp(o: Omit<DashboardOptions, 'host' | 'port'>): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const assets = loadAssets(o.asset_dir);
  app.onError((error, c) => {
    const body = errorBody(error);
    return c.json(body, statusOf(body.error.code));
  });
  // Answers for thousands of jobs are a megabyte of JSON every few seconds: gzip them (an SSH tunnel is slow).
  app.use('/dash/*', compress());
  app.get('/dash/config', (c) => c.json<DashboardConfig>({ mode: o.live ? 'live' : 'sim' }));
  if (o.live) {
    app.route('/', liveRoutes(o.live));
    const api = o.live.api_url;
    app.all('/v1/*', (c) => forward(api, c.req.raw));
  }
  if (o.sim) {
    const sim = o.sim;
    app.get('/dash/sim', (c) => c.json(sim));
  }
  app.get('*', (c) => {
    const path = c.req.path === '/' ? '/index.html' : c.req.path;
    const asset = assets.get(path);
    if (!asset) {
      if (assets.size === 0)
        return c.text('dashboard assets are missing: run `npm run build` (they are built into dist/web)', 500);
      return c.json({ error: { code: 'E_NOT_FOUND', message: `no asset ${path}` } }, 404);
    }
    return send(asset, c.req.header('accept-encoding') ?? '');
  });
  return app;
}

function send(asset: Asset, acceptEncoding: string): Response {
  const gzip = /\bgzip\b/.test(acceptEncoding);
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': 'no-cache',
    vary: 'accept-encoding',
  };
  if (gzip) headers['content-encoding'] = 'gzip';
  return new Response(new Uint8Array(gzip ? asset.gzip : asset.body), { headers });
}

const HOP_HEADERS = ['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding'];

/** Largest request body forwarded (the API's own limit); the browser app sends none. */
const MAX_FORWARD_BYTES = 4 << 20;

/** Forwards an API request to the API server unchanged (token included); the answer likewise. */
async function forward(api_url: string, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const headers = new Headers(req.headers);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  // Bodies are buffered before forwarding, so only a declared, bounded length is accepted.
  const length = Number(headers.get('content-length') ?? (headers.has('transfer-encoding') ? NaN : 0));
  if (hasBody && !(length <= MAX_FORWARD_BYTES))
    throw badRequest(`request body without a Content-Length, or larger than ${MAX_FORWARD_BYTES} bytes`);
  for (const h of HOP_HEADERS) headers.delete(h);
  let res: Response;
  try {
    res = await fetch(api_url + url.pathname + url.search, {
      method: req.method,
      headers,
      body: hasBody ? await req.arrayBuffer() : undefined,
    });
  } catch (error) {
    throw new GoodputError(
      'E_UNAVAILABLE',
      `the API server at ${api_url} did not answer (${(error as Error).message})`,
    );
  }
  const out = new Headers(res.headers);
  for (const h of HOP_HEADERS) out.delete(h);
  return new Response(await res.arrayBuffer(), { status: res.status, headers: out });
}

/** Starts the dashboard on `host:port`; E_LISTEN when the port is taken. */
export async function startDashboard(o: DashboardOptions): Promise<RunningDashboard> {
  const app = dashboardApp(o);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: o.host, port: o.port }, () => resolve(s));
    s.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new GoodputError(
          'E_LISTEN',
          error.code === 'EADDRINUSE'
            ? `dashboard port ${o.port} on ${o.host} is in use; pass --dashboard-port`
            : error.message,
        ),
      ),
    );
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host === '0.0.0.0' ? '127.0.0.1' : o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
