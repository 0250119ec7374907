/**
 * The profiler's side of the contract (docs/contract.md): a one-job report endpoint on 127.0.0.1
 * that keeps every measurement and answers each report with the configuration the profiler is
 * measuring now, and a sampler of the replicas' resident memory (their process trees).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { reportBodySchema, type Measurement } from '../../core/wire.js';
import type { BatchLimits } from '../../goodput/types.js';

/** The job id the profiler's replicas report as. */
export const PROFILE_JOB_ID = 'profile';
const MAX_BODY_BYTES = 4 << 20;

/** A measurement with when it arrived. */
export interface Arrived extends Measurement {
  received_ms: number;
}

/** The configuration the profiler asks for. */
export interface Wanted {
  local_bsz: number;
  accum_steps: number;
}

/** A report endpoint for one job: `POST /v1/jobs/profile/reports`, bearer `token`. */
export class ReportCollector {
  readonly entries: Arrived[] = [];
  limits: BatchLimits | null = null;
  wanted: Wanted | null = null;
  private server: Server | undefined;

  constructor(private readonly token: string) {}

  /** Listens on 127.0.0.1 (a free port); returns the base URL. */
  async start(): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const fail = (status: number, code: string, message: string): void => answer(status, { error: { code, message } });
    if (req.method !== 'POST' || req.url !== `/v1/jobs/${PROFILE_JOB_ID}/reports`) return fail(404, 'E_NOT_FOUND', 'only the profiled job reports here');
    if (req.headers.authorization !== `Bearer ${this.token}`) return fail(401, 'E_UNAUTHORIZED', 'bad token');
    let size = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return fail(413, 'E_TOO_LARGE', 'body too large');
      chunks.push(chunk as Buffer);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return fail(400, 'E_BAD_REQUEST', 'body is not JSON');
    }
    const parsed = reportBodySchema.safeParse(raw);
    if (!parsed.success) return fail(400, 'E_BAD_REQUEST', parsed.error.issues[0]?.message ?? 'invalid report');
    if (parsed.data.limits) this.limits = parsed.data.limits;
    const now = Date.now();
    for (const m of parsed.data.reports) this.entries.push({ ...m, received_ms: now });
    const last = parsed.data.reports[parsed.data.reports.length - 1]!;
    const config = this.wanted ?? { local_bsz: last.local_bsz, accum_steps: last.accum_steps };
    const batch_size = last.num_replicas * config.local_bsz * (config.accum_steps + 1);
    answer(200, { config: { local_bsz: config.local_bsz, accum_steps: config.accum_steps, batch_size, lr_scale: 1 } });
  }
}

/** Resident bytes of a process and its descendants (0 when it is gone). Linux /proc. */
export function treeRssBytes(pid: number, depth = 0): number {
  let total = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (match) total += Number(match[1]) * 1024;
  } catch {
    return 0;
  }
  if (depth > 4) return total;
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of children ? children.split(/\s+/) : []) total += treeRssBytes(Number(child), depth + 1);
  } catch {
    // no children file (kernel without CONFIG_PROC_CHILDREN): the process alone
  }
  return total;
}

/** Samples the largest replica's resident memory every `interval_ms`; `peak()` since the last `reset()`. */
export class RssSampler {
  private peak_bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pids: () => readonly number[], interval_ms = 200) {
    this.timer = setInterval(() => this.sample(), interval_ms);
    this.timer.unref();
  }

  sample(): void {
    for (const pid of this.pids()) this.peak_bytes = Math.max(this.peak_bytes, treeRssBytes(pid));
  }

  peak(): number {
    this.sample();
    return this.peak_bytes;
  }

  reset(): void {
    this.peak_bytes = 0;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
