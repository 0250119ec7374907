import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { BackendNode, ReplicaRef } from '../backends/backend.js';
import type { NodeInfo } from '../core/cluster.js';
import { GoodputError } from '../core/errors.js';
import { profileKeyOf } from '../core/profile-key.js';
import type { Rejection } from '../policy/policy.js';
import { ACTIVE_STATES, hungReason, isTerminal, settle, type EventKind } from '../store/lifecycle.js';
import type { DeviceBinding, TransitionDetail } from '../store/store.js';
import type { JobRecord, JobSpec, ReplicaRecord, StoredKeyProfile } from '../store/types.js';
import type { JobConfig } from './batch-config.js';
import { logTail } from './log-tail.js';
import { nodeProblems } from './node-problems.js';
import { assignDevices, sameAllocation } from './device-binding.js';
import { deviceUnit, resizeReason } from './insight.js';
import { KillDeadlines } from './kill-deadlines.js';
import { launchWait } from './launch-wait.js';
import { NetworkBook } from './network-book.js';
import { ProfileBook } from './profile-book.js';
import { ReportIngest, type ReportRequest } from './report-ingest.js';
import { buildSnapshot, holdsDevices } from './snapshot.js';
import { jobToken } from './tokens.js';
import type { ControllerOptions, ControllerStats } from './controller-options.js';

export type { ControllerOptions, ControllerStats } from './controller-options.js';

/**
 * The control loop of one cluster: scheduling rounds (snapshot -> policy -> decisions),
 * launches, checkpoint-restart rescales, restarts after failures, and reconciliation with the
 * processes that really run after a server restart. State-changing work runs one step at a
 * time (a serial queue), so two decisions about one job never interleave; every state change is
 * a named store operation with its event.
 */
export class Controller {
  private readonly rounds = { rounds_total: 0, round_seconds_sum: 0, last_round_s: 0 };
  /** Latest reason, per job, why the policy gave it fewer devices than it wanted. */
  readonly rejections = new Map<string, Rejection>();
  /** Why a `starting` job is not launched yet (restart backoff, devices still held). */
  readonly launchWaits = new Map<string, string>();
  private readonly options: ControllerOptions & { api_url: string };
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private chain: Promise<unknown> = Promise.resolve();
  private roundPending = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly killAt = new KillDeadlines();
  private readonly reports: ReportIngest;
  /** Absent when the policy does not use profiles (Policy.uses_profiles): jobs then start from nothing, as in the simulator. */
  private readonly profiles: ProfileBook | undefined;
  private stopped = false;
  private started = false;
  /** When this controller started watching replicas (hung detection counts from here at most). */
  private watchingSince_ms = 0;
  private lastWatch_ms = 0;
  /** Facts already recorded as events (node problems, an unavailable backend), to record each once. */
  private readonly noted = new Set<string>();

  constructor(options: ControllerOptions) {
    this.options = { ...options };
    this.now = options.now_ms ?? Date.now;
    this.log = options.log ?? (() => {});
    this.profiles = options.policy.uses_profiles === true ? new ProfileBook(options.store, () => options.backend.nodes(), this.log) : undefined;
    const network = this.profiles && options.policy.uses_network_model === true ? new NetworkBook(options.store, () => options.backend.nodes()) : undefined;
    this.reports = new ReportIngest({ store: options.store, refit_interval_s: options.refit_interval_s ?? 5, now_ms: this.now, log: this.log, request_round: () => this.requestRound(), ...(this.profiles ? { profiles: this.profiles } : {}), ...(network ? { network } : {}) });
    options.backend.onExit((exit) => {
      void this.serial(async () => {
        await this.options.store.recordReplicaExit(exit.job_id, exit.attempt, exit.rank, exit.exit_code, 'backend', exit.detail);
        await this.settle(exit.job_id);
        await this.pump();
      });
    });
  }

  /** The nodes of this cluster as the policy sees them: the devices Goodput may use on each. */
  nodes(): NodeInfo[] {
    return this.options.backend.nodes().map((n, index) => ({ index, name: n.name, gpus: n.usable, preemptible: false }));
  }

  /** Sets the URL replicas report to (known once the HTTP server listens). */
  setApiUrl(url: string): void {
    this.options.api_url = url;
  }

  /** The backend's inventory (nodes with all their devices). */
  inventory(): readonly BackendNode[] {
    return this.options.backend.nodes();
  }

  /** By job id, the profile each model starts from by the round's rule (none without profiles): for insights. */
  profilesFor = async (jobs: readonly JobRecord[]): Promise<ReadonlyMap<string, StoredKeyProfile>> => this.profiles?.lookup(jobs) ?? new Map();

  /** Counters for /metrics. */
  get stats(): ControllerStats {
    return { ...this.rounds, reports_total: this.reports.reports_total };
  }

  /** Reads the inventory, reconciles with running replicas, then starts the round timer and the pump. */
  async start(): Promise<void> {
    await this.options.backend.refresh();
    await this.serial(() => this.reconcile());
    this.started = true;
    this.watchingSince_ms = this.now();
    // Unref'd: the HTTP server (or `goodput run`'s wait loop) is what keeps the process alive.
    this.timers.push(setInterval(() => this.requestRound(), this.options.interval_s * 1000).unref());
    this.timers.push(setInterval(() => void this.serial(() => this.pump()), this.options.tick_ms ?? 250).unref());
    this.requestRound();
  }

  /** Stops timers and stops watching replicas; running replicas are left alone (by design). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    await this.chain.catch(() => {});
    await this.reports.stop();
    this.options.backend.close();
  }

  /** Directory of a job's checkpoints, logs and run files. */
  jobDir(job_id: string): string {
    return join(this.options.data_dir, 'jobs', job_id);
  }

  /**
   * Stores a new job (state queued; `profile` defaults to its command's, core/profile-key.ts)
   * and triggers a round. Refuses (E_INFEASIBLE, nothing stored) a job whose `min_replicas`
   * exceeds the devices of the cluster: it could never run.
   */
  async submit(spec: JobSpec, user: string, actor: string, idempotency_key?: string): Promise<JobRecord> {
    const devices = this.options.backend.nodes().flatMap((n) => n.devices);
    if (spec.min_replicas > devices.length) {
      const kind = devices[0]?.kind === 'gpu' ? 'GPU(s)' : 'CPU slot(s)';
      throw new GoodputError('E_INFEASIBLE', `job needs at least ${spec.min_replicas} replicas (min_replicas) but this cluster has ${devices.length} ${kind}; submit it with --min-replicas ${devices.length} or less`);
    }
    const job = await this.options.store.createJob({ id: randomBytes(4).toString('hex'), name: spec.name, user, spec: { ...spec, profile: profileKeyOf(spec) }, ...(idempotency_key !== undefined ? { idempotency_key } : {}) }, actor);
    this.requestRound();
    return job;
  }

  /** Cancels a job: terminal at once, replicas get SIGTERM then SIGKILL after the grace period. */
  async cancel(job_id: string, actor: string): Promise<JobRecord> {
    return this.serial(async () => {
      const job = await this.options.store.finishJob(job_id, 'cancelled', actor, `cancelled by ${actor}`);
      this.terminate(job_id, await this.liveReplicas(job_id));
      this.requestRound();
      return job;
    });
  }

  /** Stores a job's measurements and answers its configuration (see ReportIngest). */
  report(batch: ReportRequest): Promise<JobConfig> {
    return this.reports.report(batch);
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
    try {
      await this.options.backend.refresh();
    } catch (error) {
      this.log(`inventory: ${(error as Error).message}; using the last one`);
    }
    const jobs = await this.options.store.listJobs({ states: ACTIVE_STATES });
    for (const p of nodeProblems(jobs, this.options.backend.nodes())) await this.noteOnce(p.job_id, p.key, 'node-unavailable', p.reason);
    if (jobs.length > 0) {
      const profiles = (await this.profiles?.forRound(jobs)) ?? new Map<string, StoredKeyProfile>();
      const decision = this.options.policy.decide(buildSnapshot(this.nodes(), jobs, this.now(), profiles));
      this.rejections.clear();
      for (const [id, r] of Object.entries(decision.rejections ?? {})) this.rejections.set(id, r);
      await this.apply(jobs, decision.allocations, profiles);
      await this.pump();
    }
    const took_s = (performance.now() - t0) / 1000;
    Object.assign(this.rounds, { rounds_total: this.rounds.rounds_total + 1, round_seconds_sum: this.rounds.round_seconds_sum + took_s, last_round_s: took_s });
  }

  private async apply(jobs: readonly JobRecord[], allocations: Record<string, readonly number[]>, profiles: ReadonlyMap<string, StoredKeyProfile>): Promise<void> {
    const nodeDevices = this.options.backend.nodes().map((n) => n.devices.slice(0, n.usable).map((d) => d.index));
    const assigned = assignDevices(jobs, allocations, nodeDevices);
    if (!assigned.ok) {
      this.log(`scheduler: ignoring decision of ${this.options.policy.name}: ${assigned.reason}`);
      return;
    }
    const usable = nodeDevices.reduce((n, d) => n + d.length, 0);
    const unit = deviceUnit(this.options.backend.nodes().flatMap((n) => n.devices));
    const context = { policy: this.options.policy.name, idle: usable - jobs.filter(holdsDevices).reduce((n, j) => n + j.allocation.length, 0), unit, profiles };
    for (const job of jobs) {
      const allocation = [...(allocations[job.id] ?? [])];
      if (sameAllocation(allocation, job.allocation)) continue;
      const binding: DeviceBinding = { allocation, devices: assigned.devices.get(job.id) ?? [] };
      const why = resizeReason(job, job.allocation.length, allocation.length, context);
      switch (job.state) {
        case 'queued':
        case 'preempted':
          if (allocation.length > 0) await this.options.store.assignJob(job.id, binding, this.now(), 'scheduler', why);
          break;
        case 'starting':
          if (allocation.length === 0) await this.options.store.requeueJob(job.id, 'scheduler', why);
          else await this.options.store.retargetJob(job.id, binding, 'scheduler', why);
          break;
        case 'running':
          await this.options.store.stopJob(job.id, binding, 'rescale', 'scheduler', `${why}; checkpoint-restart`);
          for (const r of await this.liveReplicas(job.id)) this.options.backend.signal(this.ref(r), 'SIGTERM');
          break;
        case 'rescaling':
          await this.options.store.retargetJob(job.id, binding, 'scheduler', why);
          break;
        default:
          break;
      }
    }
  }

  /** Does what the lifecycle decides for a running or rescaling job after its replicas' exits. */
  private async settle(job_id: string): Promise<void> {
    const job = await this.options.store.getJob(job_id);
    if (!job || (job.state !== 'running' && job.state !== 'rescaling')) return;
    const replicas = await this.options.store.listReplicas(job_id, job.launches - 1);
    const action = settle(
      { ...job, attempt: job.launches - 1, max_restarts: job.spec.max_restarts, has_target: job.allocation.length > 0 },
      replicas,
      { now_ms: this.now(), early_failure_s: this.options.early_failure_s ?? 10, backoff_base_s: this.options.restart_backoff_s ?? 1 },
    );
    const live = replicas.filter((r) => r.exit_code === null);
    if (action.do === 'fail' || action.do === 'finish') await this.reports.finalRefit(job, action.do === 'finish' && action.to === 'succeeded');
    const binding: DeviceBinding = { allocation: job.allocation, devices: job.devices };
    const failed = (rank: number): TransitionDetail['data'] => ({ log_tail: logTail(replicas.find((r) => r.rank === rank)?.log_path), log_rank: rank });
    switch (action.do) {
      case 'wait':
        return;
      case 'stop':
        await this.options.store.stopJob(job_id, binding, action.kind, 'controller', action.reason, action.failure ? { failure: action.failure, data: failed(action.failure.rank) } : {});
        for (const r of live) this.options.backend.signal(this.ref(r), 'SIGTERM');
        return this.settle(job_id);
      case 'fail':
        await this.options.store.finishJob(job_id, 'failed', 'controller', action.reason, { failure: action.failure, data: failed(action.failure.rank) });
        this.terminate(job_id, live);
        break;
      case 'finish':
        await this.options.store.finishJob(job_id, action.to, 'controller', action.reason, action.to === 'failed' ? { data: failed(job.last_failure?.rank ?? 0) } : {});
        break;
      case 'requeue':
        await this.options.store.requeueJob(job_id, 'controller', action.reason);
        break;
      case 'relaunch':
        await this.options.store.relaunchJob(job_id, action.not_before_ms, 'controller', action.reason);
        break;
    }
    this.requestRound();
  }

  /** SIGTERM to the live replicas of an ended job, SIGKILL after the grace period. */
  private terminate(job_id: string, live: readonly ReplicaRecord[]): void {
    for (const r of live) this.options.backend.signal(this.ref(r), 'SIGTERM');
    if (live.length > 0) this.killAt.set(job_id, this.now() + this.options.grace_s * 1000);
  }

  /**
   * Every watch interval: records the exits of this server's replicas that ended unheard (the
   * devices are free once their processes are gone), then kills and restarts hung jobs.
   */
  private async watch(live: readonly ReplicaRecord[], now: number): Promise<void> {
    this.lastWatch_ms = now;
    for (const r of live) {
      const status = this.options.backend.probe(this.ref(r));
      if (status === 'alive') continue;
      if (await this.options.store.recordReplicaExit(r.job_id, r.attempt, r.rank, status, 'reconciler')) await this.settle(r.job_id);
    }
    for (const job of await this.options.store.listJobs({ states: ['running', 'rescaling'] })) {
      // An exit recorded but not acted on (e.g. on a full disk) is acted on now: no job stays placed with no process.
      if (!live.some((r) => r.job_id === job.id && r.attempt === job.launches - 1)) await this.settle(job.id);
      const reason = job.state === 'running' ? hungReason(job, now, this.watchingSince_ms, this.options.hung_timeout_s ?? 300) : undefined;
      if (reason === undefined) continue;
      await this.options.store.stopJob(job.id, { allocation: job.allocation, devices: job.devices }, 'hung', 'controller', reason);
      // SIGKILL: a stopped (SIGSTOP) or wedged replica would never act on SIGTERM.
      for (const r of live) if (r.job_id === job.id) this.options.backend.signal(this.ref(r), 'SIGKILL');
    }
  }

  /** Launches startable jobs and enforces SIGKILL deadlines. Cheap; runs every tick. */
  private async pump(): Promise<void> {
    if (this.stopped) return;
    const now = this.now();
    if (now - this.lastWatch_ms >= (this.options.watch_interval_s ?? 2) * 1000) await this.watch(await this.options.store.listLiveReplicas(), now);
    const live = await this.options.store.listLiveReplicas();
    const busy = new Map<string, string>();
    for (const r of live) if (r.device !== null) busy.set(`${r.node}/${r.device}`, r.job_id);
    const names = this.options.backend.nodes().map((n) => n.name);
    const jobs = await this.options.store.listJobs({ states: ['starting', 'rescaling'] });
    for (const job of jobs) {
      if (job.state === 'rescaling' && job.stop_requested_at_ms !== null && now >= job.stop_requested_at_ms + this.options.grace_s * 1000) {
        for (const r of live) if (r.job_id === job.id) this.options.backend.signal(this.ref(r), 'SIGKILL');
      }
    }
    for (const r of this.killAt.due(now, live)) this.options.backend.signal(this.ref(r), 'SIGKILL');
    for (const id of this.launchWaits.keys()) if (!jobs.some((j) => j.id === id && j.state === 'starting')) this.launchWaits.delete(id);
    for (const job of jobs) {
      if (job.state !== 'starting') continue;
      const keys = job.devices.map((d, i) => `${names[job.allocation[i]!]}/${d}`);
      const held = [...new Set(keys.filter((k) => busy.has(k) && busy.get(k) !== job.id))];
      if (now < job.not_before_ms) this.launchWaits.set(job.id, `restart backoff until ${new Date(job.not_before_ms).toISOString()}`);
      else if (held.length > 0) this.launchWaits.set(job.id, `device(s) ${held.join(',')} still held by the exiting replicas of job ${busy.get(held[0]!)}`);
      else if (!live.some((r) => r.job_id === job.id)) {
        this.launchWaits.delete(job.id);
        await this.launch(job);
      }
    }
  }

  private async launch(job: JobRecord): Promise<void> {
    const attempt = job.launches;
    const job_dir = this.jobDir(job.id);
    let launched;
    try {
      const run_as = await this.options.run_as?.(job.user);
      await this.options.backend.abandon(job.id, job_dir, attempt);
      launched = await this.options.backend.launch({
        job_id: job.id,
        attempt,
        command: job.spec.command,
        workdir: job.spec.workdir,
        env: job.spec.env,
        environment: job.spec,
        devices: job.devices,
        nodes: job.allocation,
        num_nodes: new Set(job.allocation).size,
        api_url: this.options.api_url,
        token: jobToken(this.options.secret, job.id),
        job_dir,
        ...(run_as ? { run_as } : {}),
      });
    } catch (error) {
      const message = error instanceof GoodputError ? error.message : String(error);
      const wait = launchWait(error, message);
      if (wait) {
        this.launchWaits.set(job.id, wait.reason);
        return void (await this.noteOnce(job.id, wait.key, 'backend-unavailable', `cannot launch now: ${wait.reason}`).catch(() => undefined));
      }
      await this.options.store.finishJob(job.id, 'failed', 'backend', `launch failed: ${message}`);
      this.requestRound();
      return;
    }
    for (const key of ['unavailable', 'disk-full']) this.noted.delete(`${job.id}/${key}`);
    const where = [...new Set(launched.map((r) => r.node))].join(',');
    const id = launched[0]?.launch_id ? ` (${this.options.backend.name} job ${launched[0].launch_id})` : '';
    await this.options.store.launchJob(job.id, launched, 'backend', `attempt ${attempt} on node(s) ${where}, device(s) ${job.devices.join(',')}${id}`);
  }

  /** After a restart: adopt live replicas, record the exits that happened while down, settle. */
  private async reconcile(): Promise<void> {
    const adopted: string[] = [];
    for (const r of await this.options.store.listLiveReplicas()) {
      const job = await this.options.store.getJob(r.job_id);
      const status = await this.options.backend.adopt(this.ref(r));
      if (status !== 'alive') {
        await this.options.store.recordReplicaExit(r.job_id, r.attempt, r.rank, status, 'reconciler');
        continue;
      }
      adopted.push(`${r.job_id}/${r.rank}`);
      if (!job || isTerminal(job.state) || r.attempt !== job.launches - 1) {
        this.options.backend.signal(this.ref(r), 'SIGTERM');
        this.killAt.set(r.job_id, this.now() + this.options.grace_s * 1000);
      }
    }
    if (adopted.length > 0) this.log(`reconcile: re-adopted ${adopted.length} running replica(s): ${adopted.join(' ')}`);
    for (const job of await this.options.store.listJobs({ states: ['starting'] })) await this.options.backend.abandon(job.id, this.jobDir(job.id), job.launches);
    for (const job of await this.options.store.listJobs({ states: ['running', 'rescaling'] })) await this.settle(job.id);
  }

  private async liveReplicas(job_id: string): Promise<ReplicaRecord[]> {
    return (await this.options.store.listReplicas(job_id)).filter((r) => r.exit_code === null);
  }

  private ref(r: ReplicaRecord): ReplicaRef {
    return { job_id: r.job_id, attempt: r.attempt, rank: r.rank, node: r.node, launch_id: r.launch_id, pid: r.pid, proc_start: r.proc_start, job_dir: this.jobDir(r.job_id) };
  }

  /** Records an event for a fact about a job once per `key` (a node problem, an outage). */
  private async noteOnce(job_id: string, key: string, kind: EventKind, reason: string): Promise<void> {
    if (this.noted.has(`${job_id}/${key}`)) return;
    this.noted.add(`${job_id}/${key}`);
    this.log(`job ${job_id}: ${reason}`);
    await this.options.store.recordEvent(job_id, kind, this.options.backend.name, reason, {});
  }
}
