import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Backend, DeviceInfo, ReplicaRef } from '../backends/backend.js';
import type { NodeInfo } from '../core/cluster.js';
import { GoodputError } from '../core/errors.js';
import { fitPerfParams } from '../goodput/fit.js';
import { profilePoint } from '../goodput/profile.js';
import type { BatchLimits } from '../goodput/types.js';
import type { Policy, Rejection } from '../policy/policy.js';
import type { Placement, ReportBatch, ReportsAdded, Store } from '../store/store.js';
import { ACTIVE_STATES, isTerminal, type JobRecord, type JobSpec, type Measurement, type ReplicaRecord } from '../store/types.js';
import { configFor, type JobConfig } from './batch-config.js';
import { assignDevices, sameAllocation } from './placement.js';
import { buildSnapshot } from './snapshot.js';
import { jobToken } from './tokens.js';

/** Options of the controller; times in seconds unless named otherwise. */
export interface ControllerOptions {
  store: Store;
  backend: Backend;
  policy: Policy;
  data_dir: string;
  /** Secret that job tokens derive from. */
  secret: string;
  /** Base URL replicas report to (GOODPUT_API). */
  api_url: string;
  /** Period of scheduling rounds. Rounds also run on submit and when a job ends. */
  interval_s: number;
  /** Time replicas get between SIGTERM and SIGKILL. */
  grace_s: number;
  /** Restart backoff after a failure: base * 2^(failures - 1), at most 60 s. Default 1. */
  restart_backoff_s?: number;
  /** Minimum time between refits of a job's throughput model. Default 5. */
  refit_interval_s?: number;
  log?: (line: string) => void;
  now_ms?: () => number;
  /** Period of the launch/deadline pump (ms). Default 250. */
  tick_ms?: number;
}

/** Counters for /metrics. */
export interface ControllerStats {
  reports_total: number;
  rounds_total: number;
  round_seconds_sum: number;
  last_round_s: number;
}

/**
 * The control loop of one cluster: scheduling rounds (snapshot -> policy -> decisions),
 * launches, checkpoint-restart rescales, restarts after failures, and reconciliation with the
 * processes that really run after a server restart. State-changing work runs one step at a
 * time (a serial queue), so two decisions about one job never interleave; every state change is
 * a named store operation with its event.
 */
export class Controller {
  readonly stats: ControllerStats = { reports_total: 0, rounds_total: 0, round_seconds_sum: 0, last_round_s: 0 };
  /** Latest reason, per job, why the policy gave it fewer devices than it wanted. */
  readonly rejections = new Map<string, Rejection>();
  private readonly o: ControllerOptions & { api_url: string };
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private chain: Promise<unknown> = Promise.resolve();
  private roundPending = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly killAt = new Map<string, number>();
  private readonly lastFit = new Map<string, number>();
  private readonly refitsDue = new Set<string>();
  private readonly background = new Set<Promise<void>>();
  private stopped = false;
  private pendingReports: { batch: ReportBatch; resolve: (r: ReportsAdded) => void; reject: (e: unknown) => void }[] = [];
  private started = false;

  constructor(options: ControllerOptions) {
    this.o = { ...options };
    this.now = options.now_ms ?? Date.now;
    this.log = options.log ?? (() => {});
    options.backend.onExit((exit) => {
      void this.serial(async () => {
        await this.o.store.recordReplicaExit(exit.job_id, exit.attempt, exit.rank, exit.exit_code, 'backend');
        await this.settle(exit.job_id);
        await this.pump();
      });
    });
  }

  /** The nodes of this cluster (local mode: one node holding every device). */
  nodes(): NodeInfo[] {
    return [{ index: 0, name: 'local', gpus: this.o.backend.devices().length, preemptible: false }];
  }

  /** Sets the URL replicas report to (known once the HTTP server listens). */
  setApiUrl(url: string): void {
    this.o.api_url = url;
  }

  /** Devices replicas are placed on. */
  devices(): readonly DeviceInfo[] {
    return this.o.backend.devices();
  }

  /** Reconciles with running processes, then starts the round timer and the pump. */
  async start(): Promise<void> {
    await this.serial(() => this.reconcile());
    this.started = true;
    // Unref'd: the HTTP server (or `goodput run`'s wait loop) is what keeps the process alive.
    this.timers.push(setInterval(() => this.requestRound(), this.o.interval_s * 1000).unref());
    this.timers.push(setInterval(() => void this.serial(() => this.pump()), this.o.tick_ms ?? 250).unref());
    this.requestRound();
  }

  /** Stops timers and stops watching replicas; running replicas are left alone (by design). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    await this.chain.catch(() => {});
    await Promise.allSettled([...this.background]);
    this.o.backend.close();
  }

  /** Directory of a job's checkpoints, logs and run files. */
  jobDir(job_id: string): string {
    return join(this.o.data_dir, 'jobs', job_id);
  }

  /** Stores a new job (state queued) and triggers a round. */
  async submit(spec: JobSpec, user: string, actor: string): Promise<JobRecord> {
    const job = await this.o.store.createJob({ id: randomBytes(4).toString('hex'), name: spec.name, user, spec }, actor);
    this.requestRound();
    return job;
  }

  /** Cancels a job: terminal at once, replicas get SIGTERM then SIGKILL after the grace period. */
  async cancel(job_id: string, actor: string): Promise<JobRecord> {
    return this.serial(async () => {
      const job = await this.o.store.finishJob(job_id, 'cancelled', actor, `cancelled by ${actor}`);
      const live = await this.liveReplicas(job_id);
      for (const r of live) this.o.backend.signal(this.ref(r), 'SIGTERM');
      if (live.length > 0) this.killAt.set(job_id, this.now() + this.o.grace_s * 1000);
      this.requestRound();
      return job;
    });
  }

  /**
   * Stores a job's measurements, refits its throughput model when it saw a new configuration
   * (or every refit interval), and returns the configuration it should use.
   */
  async report(job_id: string, attempt: number, limits: BatchLimits | undefined, reports: readonly Measurement[]): Promise<JobConfig> {
    const { job, new_configuration } = await this.enqueueReports({ job_id, attempt, limits, reports, profile: reports.map(profilePoint) });
    this.stats.reports_total += reports.length;
    const now = this.now();
    const last = this.lastFit.get(job_id);
    if (new_configuration || last === undefined || now - last >= (this.o.refit_interval_s ?? 5) * 1000) {
      this.lastFit.set(job_id, now);
      // The first fit is awaited so the first answer already uses a model; later refits run
      // after this response, off the request's latency (the next report sees the new model).
      if (!job.perf) await this.refit(job);
      else if (!this.refitsDue.has(job_id)) {
        this.refitsDue.add(job_id);
        const later = new Promise<void>((done) => setImmediate(done))
          .then(async () => {
            this.refitsDue.delete(job_id);
            const fresh = this.stopped ? undefined : await this.o.store.getJob(job_id);
            if (fresh) await this.refit(fresh);
          })
          .catch((error: unknown) => this.log(`refit of job ${job_id} failed: ${(error as Error).message}`));
        this.background.add(later);
        void later.finally(() => this.background.delete(later));
      }
    }
    return configFor(job, reports[reports.length - 1]!);
  }

  /** Refits the job's throughput model from its profile; a failure keeps the previous model. */
  private async refit(job: JobRecord): Promise<void> {
    try {
      const points = (await this.o.store.getProfile(job.id)).map((p) => ({
        num_nodes: p.num_nodes,
        num_replicas: p.num_replicas,
        local_bsz: p.local_bsz,
        accum_step_time_s: p.accum_step_time_s,
        optim_step_time_s: p.optim_step_time_s,
      }));
      if (points.length === 0) return;
      job.perf = fitPerfParams(points);
      await this.o.store.savePerf(job.id, job.perf);
    } catch (error) {
      this.log(`refit of job ${job.id} failed: ${(error as Error).message}`);
    }
  }

  /**
   * Group commit: batches posted in the same event-loop turn are stored in one transaction
   * (each request still answers only after its measurements are committed).
   */
  private enqueueReports(batch: ReportBatch): Promise<ReportsAdded> {
    return new Promise((resolve, reject) => {
      this.pendingReports.push({ batch, resolve, reject });
      if (this.pendingReports.length === 1) setImmediate(() => void this.flushReports());
    });
  }

  private async flushReports(): Promise<void> {
    const items = this.pendingReports;
    this.pendingReports = [];
    try {
      const results = await this.o.store.addReportBatches(items.map((i) => i.batch));
      results.forEach((r, k) => (r instanceof GoodputError ? items[k]!.reject(r) : items[k]!.resolve(r)));
    } catch (error) {
      for (const i of items) i.reject(error);
    }
  }

  /** Asks for a scheduling round soon (coalesces bursts of requests into one round). */
  requestRound(): void {
    if (this.roundPending || this.stopped || !this.started) return;
    this.roundPending = true;
    setTimeout(() => {
      this.roundPending = false;
      void this.serial(() => this.round());
    }, 20).unref();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn);
    this.chain = next.catch((error: unknown) => this.log(`controller: ${(error as Error).message}`));
    return next;
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const t0 = performance.now();
    const jobs = await this.o.store.listJobs({ states: ACTIVE_STATES });
    if (jobs.length > 0) {
      const snapshot = buildSnapshot(this.nodes(), jobs, this.now());
      const decision = this.o.policy.decide(snapshot);
      this.rejections.clear();
      for (const [id, r] of Object.entries(decision.rejections ?? {})) this.rejections.set(id, r);
      await this.apply(jobs, decision.allocations);
      await this.pump();
    }
    const took_s = (performance.now() - t0) / 1000;
    this.stats.rounds_total += 1;
    this.stats.round_seconds_sum += took_s;
    this.stats.last_round_s = took_s;
  }

  private async apply(jobs: readonly JobRecord[], allocations: Record<string, readonly number[]>): Promise<void> {
    const devices = this.o.backend.devices().map((d) => d.index);
    const assigned = assignDevices(jobs, allocations, devices);
    if (!assigned.ok) {
      this.log(`scheduler: ignoring decision of ${this.o.policy.name}: ${assigned.reason}`);
      return;
    }
    const name = this.o.policy.name;
    for (const job of jobs) {
      const allocation = [...(allocations[job.id] ?? [])];
      if (sameAllocation(allocation, job.allocation)) continue;
      const placement: Placement = { allocation, devices: assigned.devices.get(job.id) ?? [] };
      const why = `${name}: ${job.allocation.length} -> ${allocation.length} replicas`;
      switch (job.state) {
        case 'queued':
        case 'preempted':
          if (allocation.length > 0) await this.o.store.assignJob(job.id, placement, this.now(), 'scheduler', why);
          break;
        case 'starting':
          if (allocation.length === 0) await this.o.store.requeueJob(job.id, 'scheduler', why);
          else await this.o.store.retargetJob(job.id, placement, 'scheduler', why);
          break;
        case 'running':
          await this.o.store.stopJob(job.id, placement, false, 'scheduler', `rescale (checkpoint-restart) ${why}`);
          for (const r of await this.liveReplicas(job.id)) this.o.backend.signal(this.ref(r), 'SIGTERM');
          break;
        case 'rescaling':
          await this.o.store.retargetJob(job.id, placement, 'scheduler', why);
          break;
        default:
          break;
      }
    }
  }

  /** Decides what a running or rescaling job does next from its replicas' exits. */
  private async settle(job_id: string): Promise<void> {
    let job = await this.o.store.getJob(job_id);
    if (!job || (job.state !== 'running' && job.state !== 'rescaling')) return;
    const replicas = await this.o.store.listReplicas(job_id, job.launches - 1);
    const live = replicas.filter((r) => r.exit_code === null);
    const exited = replicas.filter((r) => r.exit_code !== null);
    if (job.state === 'running') {
      const bad = exited.find((r) => r.exit_code !== 0 && r.exit_code !== 143);
      const checkpointed = exited.find((r) => r.exit_code === 143);
      if (bad || checkpointed) {
        const reason = bad
          ? `replica ${bad.rank} failed with exit code ${bad.exit_code}; restarting from the last checkpoint`
          : `replica ${checkpointed!.rank} checkpointed (exit 143) without a rescale request; relaunching`;
        job = await this.o.store.stopJob(job_id, { allocation: job.allocation, devices: job.devices }, bad !== undefined, 'controller', reason);
        for (const r of live) this.o.backend.signal(this.ref(r), 'SIGTERM');
      } else if (live.length === 0) {
        await this.o.store.finishJob(job_id, 'succeeded', 'controller', 'every replica exited 0');
        this.requestRound();
        return;
      }
    }
    if (job.state !== 'rescaling' || live.length > 0) return;
    // A replica that exited 0 finished training; peers stopped by the same rescale (143) are fine.
    if (exited.some((r) => r.exit_code === 0) && exited.every((r) => r.exit_code === 0 || r.exit_code === 143)) {
      await this.o.store.finishJob(job_id, 'succeeded', 'controller', 'training finished (replicas exited 0, or 143 when stopped at the end)');
    } else {
      const failed = exited.some((r) => r.exit_code !== 0 && r.exit_code !== 143) && (await this.lastStopWasFailure(job_id));
      if (failed && job.failures > job.spec.max_restarts) {
        await this.o.store.finishJob(job_id, 'failed', 'controller', `${job.failures} failures, more than max_restarts (${job.spec.max_restarts})`);
      } else if (job.allocation.length === 0) {
        await this.o.store.requeueJob(job_id, 'controller', 'checkpointed; waiting for devices');
      } else {
        const backoff_s = failed ? Math.min(60, (this.o.restart_backoff_s ?? 1) * 2 ** (job.failures - 1)) : 0;
        const why = failed ? `restart ${job.failures}/${job.spec.max_restarts} after ${backoff_s}s backoff` : 'checkpointed; relaunching on the new placement';
        await this.o.store.relaunchJob(job_id, this.now() + backoff_s * 1000, 'controller', why);
      }
    }
    this.requestRound();
  }

  private async lastStopWasFailure(job_id: string): Promise<boolean> {
    const events = await this.o.store.listEvents(job_id);
    for (let i = events.length - 1; i >= 0; i--) {
      const kind = events[i]!.kind;
      if (kind === 'failed-replica') return true;
      if (kind === 'rescale') return false;
    }
    return false;
  }

  /** Launches startable jobs and enforces SIGKILL deadlines. Cheap; runs every tick. */
  private async pump(): Promise<void> {
    if (this.stopped) return;
    const now = this.now();
    const live = await this.o.store.listLiveReplicas();
    const busy = new Map<number, string>();
    for (const r of live) if (r.device !== null) busy.set(r.device, r.job_id);
    const jobs = await this.o.store.listJobs({ states: ['starting', 'rescaling'] });
    for (const job of jobs) {
      if (job.state === 'rescaling' && job.stop_requested_at_ms !== null && now >= job.stop_requested_at_ms + this.o.grace_s * 1000) {
        for (const r of live) if (r.job_id === job.id) this.o.backend.signal(this.ref(r), 'SIGKILL');
      }
    }
    for (const [job_id, deadline] of this.killAt) {
      if (now < deadline) continue;
      this.killAt.delete(job_id);
      for (const r of live) if (r.job_id === job_id) this.o.backend.signal(this.ref(r), 'SIGKILL');
    }
    for (const job of jobs) {
      if (job.state !== 'starting' || now < job.not_before_ms) continue;
      if (job.devices.some((d) => busy.has(d) && busy.get(d) !== job.id)) continue;
      if (live.some((r) => r.job_id === job.id)) continue;
      await this.launch(job);
    }
  }

  private async launch(job: JobRecord): Promise<void> {
    const attempt = job.launches;
    const job_dir = this.jobDir(job.id);
    this.o.backend.abandon(job_dir, attempt);
    let launched;
    try {
      launched = await this.o.backend.launch({
        job_id: job.id,
        attempt,
        command: job.spec.command,
        workdir: job.spec.workdir,
        env: job.spec.env,
        devices: job.devices,
        num_nodes: new Set(job.allocation).size,
        api_url: this.o.api_url,
        token: jobToken(this.o.secret, job.id),
        job_dir,
      });
    } catch (error) {
      const message = error instanceof GoodputError ? error.message : String(error);
      await this.o.store.finishJob(job.id, 'failed', 'backend', `launch failed: ${message}`);
      this.requestRound();
      return;
    }
    await this.o.store.launchJob(job.id, launched, 'backend', `attempt ${attempt} on device(s) ${job.devices.join(',')}`);
  }

  /** After a restart: adopt live replicas, record the exits that happened while down, settle. */
  private async reconcile(): Promise<void> {
    const adopted: string[] = [];
    for (const r of await this.o.store.listLiveReplicas()) {
      const job = await this.o.store.getJob(r.job_id);
      const status = this.o.backend.adopt(this.ref(r));
      if (status !== 'alive') {
        await this.o.store.recordReplicaExit(r.job_id, r.attempt, r.rank, status, 'reconciler');
        continue;
      }
      adopted.push(`${r.job_id}/${r.rank}`);
      if (!job || isTerminal(job.state) || r.attempt !== job.launches - 1) {
        this.o.backend.signal(this.ref(r), 'SIGTERM');
        this.killAt.set(r.job_id, this.now() + this.o.grace_s * 1000);
      }
    }
    if (adopted.length > 0) this.log(`reconcile: re-adopted ${adopted.length} running replica(s): ${adopted.join(' ')}`);
    for (const job of await this.o.store.listJobs({ states: ['starting'] })) this.o.backend.abandon(this.jobDir(job.id), job.launches);
    for (const job of await this.o.store.listJobs({ states: ['running', 'rescaling'] })) await this.settle(job.id);
  }

  private async liveReplicas(job_id: string): Promise<ReplicaRecord[]> {
    return (await this.o.store.listReplicas(job_id)).filter((r) => r.exit_code === null);
  }

  private ref(r: ReplicaRecord): ReplicaRef {
    return { job_id: r.job_id, attempt: r.attempt, rank: r.rank, pid: r.pid, proc_start: r.proc_start, job_dir: this.jobDir(r.job_id) };
  }
}
