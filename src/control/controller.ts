import { randomBytes } from 'node:crypto';
import type { BackendNode } from '../backends/backend.js';
import type { NodeInfo } from '../core/cluster.js';
import { GoodputError } from '../core/errors.js';
import type { Rejection } from '../policy/policy.js';
import { PLACED_STATES } from '../store/lifecycle.js';
import type { CancelledJob, CancelQuery } from '../store/store.js';
import type { JobRecord, JobSpec, StoredKeyProfile } from '../store/types.js';
import type { TimerId } from '../util/clock.js';
import type { Turns } from '../util/turns.js';
import type { JobConfig } from './reports/batch-config.js';
import { ControllerContext } from './controller-context.js';
import {
  resolveControllerOptions,
  type ControllerConfig,
  type ControllerOptions,
  type ControllerStats,
} from './controller-options.js';
import { Launcher } from './replicas/launcher.js';
import { NetworkBook } from './reports/network-book.js';
import { admitJob } from '../admission/admit.js';
import { ACTIVE_STATES } from '../store/lifecycle.js';
import { renamedKeyNote, sameNameNote } from '../admission/notes.js';
import { defaultProfileKey } from '../core/profile-key.js';
import { scopedKey } from '../core/profile-scope.js';
import { gpuTypeOf, ProfileBook } from './reports/profile-book.js';
import { ReportIngest, type ReportRequest } from './reports/report-ingest.js';
import { Round } from './loop/round.js';
import type { ShareUsage } from '../core/cluster.js';
import { NO_SHARES, type SharesConfig } from '../policy/shares/index.js';
import { Supervisor } from './replicas/supervisor.js';
import { logTail } from './replicas/log-tail.js';
import type { RankSummaryBody } from '../core/rank-wire.js';
import { DeviceHealth, withDeviceHealth, type DeviceMark } from './ranks/device-health.js';
import { RankBook } from './ranks/rank-book.js';
import { RankWatch, type RankVerdicts } from './ranks/rank-watch.js';

export type { ControllerOptions, ControllerStats } from './controller-options.js';

/** A round of this many seconds or more spaces out the next one (Controller.requestRound); a small cluster's take a few ms. */
const HEAVY_ROUND_S = 0.05;

/**
 * How long after it is asked for the next round starts, given the last round's real time: twice
 * that time after a heavy round (HEAVY_ROUND_S or more), else 20 ms (Controller.requestRound).
 */
export function roundSpacing_ms(last_round_s: number): number {
  return last_round_s >= HEAVY_ROUND_S ? 2 * last_round_s * 1000 : 20;
}

/**
 * The control loop of one cluster, composed of its parts: scheduling rounds (loop/round.ts:
 * snapshot -> policy -> decisions), launches and kill deadlines (replicas/launcher.ts), and what
 * follows replicas' exits, hung jobs and reconciliation after a server restart
 * (replicas/supervisor.ts); the report path is reports/report-ingest.ts. State-changing work runs one step at a time (a serial queue), so two
 * decisions about one job never interleave; every state change is a named store operation with
 * its event. Options are resolved once (controller-options.ts); time and timers come from its
 * clock, so a FakeClock runs it in test time.
 */
export class Controller {
  private readonly options: ControllerConfig;
  private readonly ctx: ControllerContext;
  private readonly reports: ReportIngest;
  /** Absent when the policy does not use profiles (Policy.uses_profiles): jobs then start from nothing, as in the simulator. */
  private readonly profiles: ProfileBook | undefined;
  private readonly roundPart: Round;
  private readonly supervisor: Supervisor;
  private readonly launcher: Launcher;
  /** The verdicts across ranks (which rank is slow, which is hung) and the device marks they feed. */
  private readonly rankWatch: RankWatch;
  private chain: Promise<unknown> = Promise.resolve();
  /** How long the queue of `serial` runs before it gives way. */
  private readonly queueTurns: Turns;
  private roundPending = false;
  private pumpPending = false;
  private readonly timers: TimerId[] = [];
  private stopped = false;
  private started = false;

  constructor(options: ControllerOptions) {
    // Placement sees the inventory less the devices the verdicts across ranks drained (ranks/device-health.ts).
    const health = new DeviceHealth();
    this.options = resolveControllerOptions({ ...options, backend: withDeviceHealth(options.backend, health) });
    const { store, backend, policy } = this.options;
    const log = (line: string) => this.options.log(line);
    this.profiles =
      policy.uses_profiles === true
        ? new ProfileBook(store, () => backend.nodes(), log, this.options.shared_profiles === true)
        : undefined;
    const network =
      this.profiles && policy.uses_network_model === true ? new NetworkBook(store, () => backend.nodes()) : undefined;
    this.reports = new ReportIngest({
      store,
      refit_interval_s: this.options.refit_interval_s,
      now_ms: () => this.options.clock.now_ms(),
      log,
      request_round: () => this.requestRound(),
      gpu_type_of: (job) => gpuTypeOf(job, backend.nodes()),
      ...(this.profiles ? { profiles: this.profiles } : {}),
      ...(network ? { network } : {}),
    });
    this.ctx = new ControllerContext(this.options, this.reports, () => this.requestRound());
    this.queueTurns = this.ctx.turns();
    this.roundPart = new Round(this.ctx, this.profiles, () => health.marks());
    this.supervisor = new Supervisor(this.ctx);
    this.rankWatch = new RankWatch(this.ctx, new RankBook(), health, options.rank_watch);
    this.supervisor.afterWatch = (live, now) => this.rankWatch.check(live, now);
    this.launcher = new Launcher(this.ctx, this.supervisor);
    backend.onExit((exit) => {
      void this.serial(async () => {
        // An attempt still held when it ended is recorded with these exits once the launcher sees it.
        if (this.launcher.keepExit(exit)) return;
        await store.recordReplicaExit(exit, 'backend');
        await this.supervisor.settle(exit.job_id);
        this.pumpSoon();
      });
    });
  }

  /** Latest reason, per job, why the policy gave it fewer devices than it wanted. */
  get rejections(): ReadonlyMap<string, Rejection> {
    return this.roundPart.rejections;
  }

  /** Why a `starting` job is not running yet (restart backoff, devices still held, the cluster holding it). */
  get launchWaits(): ReadonlyMap<string, string> {
    return this.launcher.launchWaits;
  }

  /** Jobs whose launch the cluster holds (a PENDING Slurm job, a drained partition), with why: no device in use. */
  get backendHolds(): ReadonlyMap<string, string> {
    return this.launcher.backendHolds;
  }

  /** The nodes of this cluster as the policy sees them: the devices Goodput may use on each. */
  nodes(): NodeInfo[] {
    return this.roundPart.nodes();
  }

  /** Sets the URL replicas report to (known once the HTTP server listens). */
  setApiUrl(url: string): void {
    this.options.api_url = url;
  }

  /** The backend's inventory (nodes with all their devices). */
  inventory(): readonly BackendNode[] {
    return this.options.backend.nodes();
  }

  /** The shares in force and the decayed usage as of the last round (`goodput shares`, /metrics). */
  shares(): { config: SharesConfig; usage: ShareUsage | undefined } {
    return { config: this.ctx.config.shares?.() ?? NO_SHARES, usage: this.roundPart.shareUsage };
  }

  /** By job id, the profile each model starts from by the round's rule (none without profiles): for insights. */
  profilesFor = async (jobs: readonly JobRecord[]): Promise<ReadonlyMap<string, StoredKeyProfile>> =>
    this.profiles?.lookup(jobs) ?? new Map();

  /** Counters for /metrics. */
  get stats(): ControllerStats {
    return { ...this.roundPart.stats, reports_total: this.reports.reports_total };
  }

  /** Reads the inventory, reconciles with running replicas, then starts the round timer and the pump. */
  async start(): Promise<void> {
    const clock = this.options.clock;
    await this.options.backend.refresh();
    await this.serial(() => this.supervisor.reconcile());
    this.started = true;
    this.supervisor.startWatching();
    // Unref'd (systemClock): the HTTP server (or `goodput run`'s wait loop) keeps the process alive.
    this.timers.push(clock.setInterval(() => this.requestRound(), this.options.interval_s * 1000));
    this.timers.push(clock.setInterval(() => this.pumpSoon(), this.options.tick_ms));
    this.requestRound();
  }

  /** Stops timers and stops watching replicas; running replicas are left alone (by design). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) this.options.clock.clear(t);
    await this.chain.catch(() => {});
    await this.reports.stop();
    this.options.backend.close();
  }

  /** Directory of a job's checkpoints, logs and run files. */
  jobDir(job_id: string): string {
    return this.ctx.jobDir(job_id);
  }

  /**
   * Stores a new job (state queued; its spec completed by admission/admit.ts, which refuses with
   * E_INFEASIBLE, nothing stored, a job that could never run here) and triggers a round.
   */
  async submit(spec: JobSpec, user: string, actor: string, idempotency_key?: string): Promise<JobRecord> {
    return (await this.submitWithNotes(spec, user, actor, idempotency_key)).job;
  }

  /**
   * submit, with what the user is told about the job (admission/notes.ts): the notes of its one
   * admission, and other active jobs of its owner under its name (one filtered query).
   */
  async submitWithNotes(
    spec: JobSpec,
    user: string,
    actor: string,
    idempotency_key?: string,
  ): Promise<{ job: JobRecord; notes: string[] }> {
    const carry = this.options.backend.refuseSpec?.(spec);
    if (carry !== undefined) throw new GoodputError('E_SPEC', `job spec is invalid: ${carry}`);
    const { backend } = this.options;
    const admission = await admitJob(
      spec,
      backend.nodes().flatMap((n) => n.devices),
      backend.replicaPath?.(),
    );
    const job = await this.options.store.createJob(
      {
        id: randomBytes(4).toString('hex'),
        name: spec.name,
        user,
        spec: admission.spec,
        limits: this.options.user_limits,
        ...(idempotency_key !== undefined ? { idempotency_key } : {}),
      },
      actor,
    );
    this.requestRound();
    const notes = [...admission.notes];
    try {
      const legacy = spec.profile === undefined ? defaultProfileKey(spec.command) : undefined;
      const key = admission.spec.profile!;
      if (
        legacy !== undefined &&
        legacy !== key &&
        (await this.options.store.listKeyProfiles(scopedKey(legacy, this.options.shared_profiles === true ? '' : user)))
          .length > 0
      ) {
        notes.push(renamedKeyNote(key, legacy));
      }
    } catch {
      // the note is a courtesy
    }
    try {
      const same = await this.options.store.listJobsPage({ user, name: job.name, states: ACTIVE_STATES, limit: 21 });
      const note = sameNameNote(job, same.jobs.filter((j) => j.id !== job.id).slice(0, 20));
      if (note !== undefined) notes.push(note);
    } catch {
      // the note is a courtesy
    }
    return { job, notes };
  }

  /** Cancels a job: terminal at once, replicas get SIGTERM then SIGKILL after the grace period. */
  /**
   * Cancels every job matching `query` in one store transaction (Store.cancelJobs), then stops
   * the replicas of those that held devices as `cancel` does. Returns what was cancelled.
   */
  async cancelMatching(query: CancelQuery, actor: string): Promise<CancelledJob[]> {
    return this.serial(async () => {
      const done = await this.options.store.cancelJobs(
        query,
        actor,
        `cancelled by ${actor} (bulk: ${describeQuery(query)})`,
      );
      for (const job of done)
        if (PLACED_STATES.includes(job.from)) this.supervisor.terminate(job.id, await this.ctx.liveReplicas(job.id));
      if (done.length > 0) this.requestRound();
      return done;
    });
  }

  async cancel(job_id: string, actor: string): Promise<JobRecord> {
    return this.serial(async () => {
      const job = await this.options.store.finishJob(job_id, 'cancelled', actor, `cancelled by ${actor}`);
      this.supervisor.terminate(job_id, await this.ctx.liveReplicas(job_id));
      this.requestRound();
      return job;
    });
  }

  /** Stores a job's measurements and answers its configuration (see ReportIngest). */
  report(batch: ReportRequest): Promise<JobConfig> {
    return this.reports.report(batch);
  }

  /**
   * Keeps one rank's summary (POST /v1/jobs/{id}/ranks). E_NOT_FOUND for an unknown job,
   * E_CONFLICT when the job no longer runs that attempt (the rank stops posting).
   */
  async rankSummary(job_id: string, body: RankSummaryBody): Promise<void> {
    const job = await this.options.store.getJob(job_id);
    if (!job) throw new GoodputError('E_NOT_FOUND', `no job ${job_id}`);
    if (job.launches - 1 !== body.attempt || (job.state !== 'running' && job.state !== 'starting'))
      throw new GoodputError('E_CONFLICT', `job ${job_id} does not run attempt ${body.attempt} now (${job.state})`);
    this.rankWatch.book.add(job_id, body, this.options.clock.now_ms());
  }

  /** The verdicts across a job's ranks at the last watch, if its ranks report. */
  rankVerdicts(job_id: string): RankVerdicts | undefined {
    return this.rankWatch.verdicts(job_id);
  }

  /** Each live replica's main process as the backend reads it (state, CPU time) and its last log line. */
  async processFacts(
    job_id: string,
  ): Promise<{ rank: number; state: string | null; cpu_s: number | null; last_log_line: string }[]> {
    const backend = this.options.backend;
    const live = await this.ctx.liveReplicas(job_id);
    await backend.refreshFacts?.(live.map((r) => this.ctx.ref(r)));
    return live.map((r) => {
      const facts = backend.processFacts?.(this.ctx.ref(r));
      return {
        rank: r.rank,
        state: facts?.state ?? null,
        cpu_s: facts?.cpu_s ?? null,
        last_log_line: logTail(r.log_path, 1, 1024).trim(),
      };
    });
  }

  /** Devices marked slow or drained by the verdicts across ranks. */
  deviceMarks(): DeviceMark[] {
    return this.rankWatch.health.marks();
  }

  /** Clears the marks of a node's devices (all, or one); answers the cleared ones and asks for a round. */
  clearDeviceMarks(node: string, device?: number): DeviceMark[] {
    const cleared = this.rankWatch.health.clear(node, device);
    if (cleared.length > 0) {
      this.options.log(`nodes: cleared ${cleared.map((m) => `${m.node}/${m.device} (${m.kind})`).join(', ')}`);
      this.requestRound();
    }
    return cleared;
  }

  /**
   * Asks for a scheduling round soon (coalesces bursts of requests into one round). After a round
   * that took HEAVY_ROUND_S or more, the next one starts no sooner than twice its time after the
   * request, so rounds take at most a third of the server's time: at 16,384 GPUs a round takes
   * 150-400 ms, and jobs ending, starting and rescaling asked for rounds back to back, which held
   * the CPU and made every report wait (issue #49). Rounds of a small cluster take milliseconds:
   * no change there.
   */
  requestRound(): void {
    if (this.roundPending || this.stopped || !this.started) return;
    this.roundPending = true;
    this.options.clock.setTimeout(() => {
      this.roundPending = false;
      void this.serial(async () => {
        if (!this.stopped) await this.roundPart.run(() => this.pump());
      });
    }, roundSpacing_ms(this.roundPart.stats.last_round_s));
  }

  private pump(): Promise<void> {
    return this.stopped ? Promise.resolve() : this.launcher.pump();
  }

  /**
   * One pump after the work already queued, unless one is queued and not started yet: the 8 ranks
   * of a stopped attempt exit together, and each pump reads the starting jobs' live replicas (at
   * 16,384 GPUs, 40 pumps a second while jobs rescaled; issue #49); and a tick that comes while a
   * long pump gives way (util/turns.ts) adds no second one behind it.
   */
  private pumpSoon(): void {
    if (this.pumpPending) return;
    this.pumpPending = true;
    void this.serial(() => {
      this.pumpPending = false;
      return this.pump();
    });
  }

  /**
   * Runs `fn` after the work queued before it. The queue gives way to the event loop once its
   * budget is spent (util/turns.ts): each step's store writes are synchronous, so a burst of
   * steps (the 8 replica exits of each of hundreds of jobs stopped by one round at 16,384 GPUs)
   * ran as one chain of microtasks and held every report for up to half a second (issue #49).
   */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(async () => {
      await this.queueTurns.pause();
      return fn();
    });
    this.chain = next.catch((error: unknown) => this.options.log(`controller: ${(error as Error).message}`));
    return next;
  }
}

/** `user=U state=queued,preempted` for an event's reason. */
function describeQuery(q: CancelQuery): string {
  const parts = [
    q.user !== undefined ? `user=${q.user}` : '',
    q.name !== undefined ? `name=${q.name}` : '',
    q.states !== undefined ? `state=${q.states.join(',')}` : '',
  ];
  return parts.filter((p) => p !== '').join(' ') || 'every active job';
}
