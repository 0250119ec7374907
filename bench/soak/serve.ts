/**
 * A real `goodput up` for the soak's fault modules (big-store.ts, flood.ts): a separate process
 * on loopback with CPU slots, its admin client, and the small HTTP helpers they measure with.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { GoodputClient } from '../../src/client/client.js';
import { packagePath } from '../../src/util/package-root.js';

/** What lost, stuck and slow mean for one fault, and whether its targets were met. */
export interface SoakFault {
  fault: string;
  lost: string;
  stuck: string;
  slow: string;
  met: boolean;
  /** Further lines of figures. */
  details: string[];
}

/** A running server started by `startUp`. */
export interface UpServer {
  pid: number;
  url: string;
  admin: string;
  client: GoodputClient;
  /** The dashboard's URL (with `dashboard: true`). */
  dashboard_url?: string;
  stop(): void;
}

const CLI = packagePath('dist', 'src', 'cli', 'main.js');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for `check` to answer something (polling every 100 ms); throws after `timeout_ms`. */
export async function waitFor<T>(
  what: string,
  timeout_ms: number,
  check: () => Promise<T | undefined | false>,
): Promise<T> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Starts `goodput up` on `data_dir` (2 CPU slots, fifo, 2 s rounds) with `extra` flags. */
export async function startUp(
  data_dir: string,
  log_dir: string,
  extra: readonly string[],
  dashboard = false,
): Promise<UpServer> {
  const log = openSync(join(log_dir, 'up.log'), 'a');
  const args = [
    CLI,
    'up',
    '--data-dir',
    data_dir,
    '--port',
    '0',
    '--dashboard-port',
    dashboard ? '0' : 'off',
    '--cpu-slots',
    '2',
    '--interval-s',
    '2',
    '--grace-s',
    '2',
    '--policy',
    'fifo',
    ...extra,
  ];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  closeSync(log);
  const info = await waitFor('the server to start', 120_000, async () => {
    const s = JSON.parse(readFileSync(join(data_dir, 'server.json'), 'utf8')) as { url: string; pid: number };
    return s.pid === child.pid ? s : undefined;
  });
  const dashboard_url = dashboard
    ? await waitFor(
        'the dashboard',
        30_000,
        async () =>
          existsSync(join(data_dir, 'dashboard.json')) &&
          (JSON.parse(readFileSync(join(data_dir, 'dashboard.json'), 'utf8')) as { url: string }).url,
      )
    : undefined;
  const admin = readFileSync(join(data_dir, 'admin-token'), 'utf8').trim();
  return {
    pid: child.pid!,
    url: info.url,
    admin,
    client: new GoodputClient(info.url, admin),
    ...(dashboard_url ? { dashboard_url } : {}),
    stop() {
      try {
        process.kill(child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    },
  };
}

export const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One request (keep-alive agent): its status, time and body. */
export function call(
  base: string,
  method: string,
  path: string,
  token?: string,
  body?: string,
): Promise<{ status: number; ms: number; text: string }> {
  const url = new URL(base);
  const t0 = performance.now();
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = token ? { authorization: `Bearer ${token}` } : {};
    if (body !== undefined)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    const req = request({ host: url.hostname, port: url.port, path, method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - t0,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0, text: '' }));
    req.end(body);
  });
}

/** The q-quantile of `values` (nearest rank); NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

/** A counter or gauge of the server's /metrics (first sample of `name`). */
export async function metric(base: string, name: string): Promise<number> {
  const text = (await call(base, 'GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}
