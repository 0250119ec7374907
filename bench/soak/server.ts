/**
 * A real `goodput up` for bench:soak and its fault modules: one process on loopback with CPU
 * slots, started on a data directory, waited for, stopped with kill -9; and the timed raw HTTP
 * call, quantile and polling the modules measure with.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import { join } from 'node:path';
import { GoodputClient } from '../../src/client/client.js';
import { packagePath } from '../../src/util/package-root.js';
import { waitFor } from '../../test-support/control/harness.js';

const CLI = packagePath('dist', 'src', 'cli', 'main.js');
// The tests' polling serves here too (150 ms; its timeout error names the last failure).
export { sleep, waitFor } from '../../test-support/control/harness.js';

/** How to start one server. */
export interface UpOptions {
  /** The file its stdout and stderr are appended to. */
  log_file: string;
  /** Seconds between scheduling rounds. */
  interval_s: number;
  /** How long to wait for its server.json. */
  timeout_ms: number;
  /** The API port; 0 (any free one) unless given. */
  port?: number;
  /** Serve the dashboard on a free port and wait for its dashboard.json. */
  dashboard?: boolean;
  /** Further flags, after the defaults (a repeated flag overrides). */
  extra?: readonly string[];
}

/** A running server started by `startUp`. */
export interface UpServer {
  pid: number;
  url: string;
  admin: string;
  client: GoodputClient;
  /** The dashboard's URL (with `dashboard: true`). */
  dashboard_url?: string;
  /** kill -9 of the server (its replicas keep running). */
  stop(): void;
}

/**
 * Starts `goodput up` on `data_dir` (2 CPU slots, fifo, 2 s grace, loopback) detached from this
 * process, and returns once the server.json it writes names its pid (not a previous server's).
 */
export async function startUp(data_dir: string, o: UpOptions): Promise<UpServer> {
  const log = openSync(o.log_file, 'a');
  const args = [
    CLI,
    'up',
    '--data-dir',
    data_dir,
    '--port',
    String(o.port ?? 0),
    '--dashboard-port',
    o.dashboard ? '0' : 'off',
    '--cpu-slots',
    '2',
    '--interval-s',
    String(o.interval_s),
    '--grace-s',
    '2',
    '--policy',
    'fifo',
    ...(o.extra ?? []),
  ];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  closeSync(log);
  const info = await waitFor('the server to start', o.timeout_ms, async () => {
    const s = JSON.parse(readFileSync(join(data_dir, 'server.json'), 'utf8')) as { url: string; pid: number };
    return s.pid === child.pid ? s : undefined;
  });
  const dashboard_url = o.dashboard
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

/** One timed request through `agent`: status, milliseconds and body text (status 0 when it failed). */
export function timedCall(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  token?: string,
  body?: string | Buffer,
): Promise<{ status: number; text: string; ms: number }> {
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
          text: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - t0,
        }),
      );
    });
    // Status 0: no answer; the text says why (ECONNRESET, ...), for the bench's first failure line.
    req.on('error', (error) => resolve({ status: 0, text: error.message, ms: performance.now() - t0 }));
    req.end(body);
  });
}

/** The q-quantile (0..1) of `values` (nearest rank); NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
}
