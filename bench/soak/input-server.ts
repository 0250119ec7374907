/**
 * A real `goodput up` in its own process for the input and store faults of bench:soak (issue 47
 * items 5, 6, 10), with raw HTTP calls that time each request.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { GoodputClient } from '../../src/client/client.js';
import { startUp as startServer } from './server.js';

export { quantile, sleep, timedCall } from './server.js';

/** A started server. */
export interface UpProcess {
  pid: number;
  url: URL;
  admin: string;
  client: GoodputClient;
  /** kill -9 of the server (its replicas keep running). */
  kill(): void;
}

/**
 * Starts `goodput up` on `data_dir` (2 CPU slots, fifo, 1 s rounds, loopback, `extra` flags), logging
 * beside it to `<name>-up.log`; waits for its server.json.
 */
export async function startUp(data_dir: string, extra: readonly string[] = []): Promise<UpProcess> {
  mkdirSync(data_dir, { recursive: true, mode: 0o700 });
  const log_file = join(data_dir, '..', `${data_dir.split('/').pop()}-up.log`);
  const up = await startServer(data_dir, { log_file, interval_s: 1, timeout_ms: 60_000, extra });
  return { pid: up.pid, url: new URL(up.url), admin: up.admin, client: up.client, kill: up.stop };
}

/** What one fault of the soak found: the lines to print and whether its target was met. */
export interface FaultResult {
  fault: string;
  lines: string[];
  met: boolean;
}
