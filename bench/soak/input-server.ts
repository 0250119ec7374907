/**
 * A real `goodput up` in its own process for the input and store faults of bench:soak (issue 47
 * items 5, 6, 10), with raw HTTP calls that time each request.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import { join } from 'node:path';
import { GoodputClient } from '../../src/client/client.js';
import { packagePath } from '../../src/util/package-root.js';

const CLI = packagePath('dist', 'src', 'cli', 'main.js');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A started server. */
export interface UpProcess {
  pid: number;
  url: URL;
  admin: string;
  client: GoodputClient;
  /** kill -9 of the server (its replicas keep running). */
  kill(): void;
}

/** Starts `goodput up` on `data_dir` (2 CPU slots, fifo, loopback, `extra` flags); waits for its server.json. */
export async function startUp(data_dir: string, extra: readonly string[] = []): Promise<UpProcess> {
  mkdirSync(data_dir, { recursive: true, mode: 0o700 });
  const log = openSync(join(data_dir, '..', `${data_dir.split('/').pop()}-up.log`), 'a');
  const child = spawn(
    process.execPath,
    [
      CLI,
      'up',
      '--data-dir',
      data_dir,
      '--port',
      '0',
      '--dashboard-port',
      'off',
      '--cpu-slots',
      '2',
      '--interval-s',
      '1',
      '--grace-s',
      '2',
      '--policy',
      'fifo',
      ...extra,
    ],
    { detached: true, stdio: ['ignore', log, log] },
  );
  child.unref();
  closeSync(log);
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const info = JSON.parse(readFileSync(join(data_dir, 'server.json'), 'utf8')) as { url: string; pid: number };
      if (info.pid === child.pid) {
        const admin = readFileSync(join(data_dir, 'admin-token'), 'utf8').trim();
        return {
          pid: child.pid,
          url: new URL(info.url),
          admin,
          client: new GoodputClient(info.url, admin),
          kill: () => kill(child.pid!),
        };
      }
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`goodput up on ${data_dir} did not start`);
    await sleep(100);
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** One timed request: status, body text, milliseconds. */
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
    req.on('error', () => resolve({ status: 0, text: '', ms: performance.now() - t0 }));
    req.end(body);
  });
}

/** The q-quantile (0..1) of `values` (NaN when empty). */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
}

/** What one fault of the soak found: the lines to print and whether its target was met. */
export interface FaultResult {
  fault: string;
  lines: string[];
  met: boolean;
}
