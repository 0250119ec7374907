/**
 * A real `goodput up` for the soak's fault modules (big-store.ts, flood.ts): a separate process
 * on loopback with CPU slots, its admin client, and the small HTTP helpers they measure with.
 */
import { Agent } from 'node:http';
import { join } from 'node:path';
import { startUp as startServer, timedCall, type UpServer } from './server.js';

export { quantile, sleep, waitFor, type UpServer } from './server.js';

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

/** Starts `goodput up` on `data_dir` (2 CPU slots, fifo, 2 s rounds) with `extra` flags, logging to `log_dir`/up.log. */
export function startUp(
  data_dir: string,
  log_dir: string,
  extra: readonly string[],
  dashboard = false,
): Promise<UpServer> {
  return startServer(data_dir, {
    log_file: join(log_dir, 'up.log'),
    interval_s: 2,
    timeout_ms: 120_000,
    dashboard,
    extra,
  });
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
  return timedCall(agent, new URL(base), method, path, token, body);
}

/** A counter or gauge of the server's /metrics (first sample of `name`). */
export async function metric(base: string, name: string): Promise<number> {
  const text = (await call(base, 'GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}
