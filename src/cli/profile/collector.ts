/**
 * The profiler's side of the contract (docs/contract.md): the control plane's report endpoint
 * (api/report-route.ts, its body limit, schema and job token) served for the one job it measures
 * (on 127.0.0.1, or where compute nodes reach it for the Slurm backend), keeping every
 * measurement and answering each report with the configuration the profiler is measuring now,
 * and a sampler of the replicas' resident memory (their process trees, on this machine).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { reportApp } from '../../api/report-route.js';
import type { ReportRequest } from '../../control/reports/report-ingest.js';
import { jobToken, newSecret } from '../../control/tokens.js';
import { GoodputError } from '../../core/errors.js';
import type { JobConfig, Measurement } from '../../core/wire.js';
import type { BatchLimits } from '../../goodput/types.js';

/** Where the report endpoint listens for replicas on this machine. */
const LOOPBACK = { host: '127.0.0.1', reported_host: '127.0.0.1' };

/**
 * The prefix of the job id a profiler's replicas report as. Each run has an id of its own
 * (ReportCollector.job_id): the local backend's containment sweep kills every process that
 * carries a job id and attempt, so two runs on one machine with one id killed each other's replicas.
 */
export const PROFILE_JOB_ID = 'profile';

/** A measurement with when it arrived. */
export interface Arrived extends Measurement {
  received_ms: number;
}

/** The configuration the profiler asks for. */
export interface Wanted {
  local_bsz: number;
  accum_steps: number;
}

/** The report endpoint of the profiled job; its replicas post with `token`. */
export class ReportCollector {
  readonly entries: Arrived[] = [];
  limits: BatchLimits | null = null;
  wanted: Wanted | null = null;
  /** This run's job id: PROFILE_JOB_ID and a random suffix. */
  readonly job_id = `${PROFILE_JOB_ID}-${randomBytes(4).toString('hex')}`;
  /** The job token of job_id (GOODPUT_TOKEN of the replicas). */
  readonly token: string;
  private readonly secret = newSecret();
  private server: ServerType | undefined;

  constructor() {
    this.token = jobToken(this.secret, this.job_id);
  }

  /**
   * Listens on `listen.host` (default 127.0.0.1; a free port); returns the base URL (GOODPUT_API)
   * with `listen.reported_host` (default the listen host): the address the replicas reach it at.
   */
  async start(listen: { host: string; reported_host: string } = LOOPBACK): Promise<string> {
    const app = reportApp(this.secret, (batch) => Promise.resolve(this.report(batch)));
    const server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: listen.host, port: 0 }, () => resolve(s));
      s.once('error', (error: Error) => {
        const why = `the profiler's report endpoint cannot listen on ${listen.host}: ${error.message}`;
        reject(new GoodputError('E_LISTEN', why));
      });
    });
    this.server = server;
    return `http://${listen.reported_host}:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps a report's measurements and answers the configuration measured now (or the job's own). */
  report(batch: ReportRequest): JobConfig {
    if (batch.job_id !== this.job_id)
      throw new GoodputError('E_NOT_FOUND', `no job '${batch.job_id}' is profiled here`);
    if (batch.limits) this.limits = batch.limits;
    const now = Date.now();
    for (const m of batch.reports) this.entries.push({ ...m, received_ms: now });
    const last = batch.reports[batch.reports.length - 1]!;
    const config = this.wanted ?? { local_bsz: last.local_bsz, accum_steps: last.accum_steps };
    const batch_size = last.num_replicas * config.local_bsz * (config.accum_steps + 1);
    return { local_bsz: config.local_bsz, accum_steps: config.accum_steps, batch_size, lr_scale: 1 };
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

  constructor(
    private readonly pids: () => readonly number[],
    interval_ms = 200,
  ) {
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
