import { mkdirSync, rmSync } from 'node:fs';
import { GoodputError } from '../../core/errors.js';
import {
  EXIT_LOST,
  type Backend,
  type BackendNode,
  type LaunchedReplica,
  type LaunchRequest,
  type ReplicaExit,
  type ReplicaRef,
  type RunAs,
  type SpecToCarry,
} from '../backend.js';
import { contractEnv, perRankLists } from '../contract-env.js';
import { execPlan } from '../job-env.js';
import { jobDirs, readExitFile, runFileBase } from '../run-files.js';
import { freePort } from '../local/process-info.js';
import { batchScript, rankNodes, STOP_SIGNAL } from './batch-script.js';
import { ACTIVE_JOB_STATES, buildInventory, parseSinfo, parseSqueue, type SlurmJob } from './inventory.js';
import { slurmRun, type SlurmRunOptions } from './slurm-cli.js';
import { isStateRefusal, partitionRefusal, pendingWords, slurmSpecRefusal, slurmWords } from './slurm-states.js';
import {
  EXIT_FILE_WAIT_MS,
  isActive,
  outsideEnd,
  outsideReasonWait_ms,
  SIGNAL_EXIT_CODES,
  started,
  type Watched,
} from './exit-watch.js';
import { launchedReplicas, sharesOf } from './launch-inputs.js';
import { checkOwner, submitAs } from './run-as-owner.js';
import { FactsAsk, readFacts } from './ask-facts.js';

/** Options of the Slurm backend. */
export interface SlurmBackendOptions {
  partition?: string;
  account?: string;
  qos?: string;
  /** Prefix of this server's Slurm job names (`<prefix>-<job>-<attempt>`); tells its jobs from others'. */
  name_prefix: string;
  /** Added to the environment of every Slurm command (e.g. SLURM_CONF). */
  env?: Readonly<Record<string, string>>;
  /** How often running jobs are polled for exits (ms). Default 1000. */
  poll_ms?: number;
  log?: (line: string) => void;
}

/**
 * Runs each attempt as one Slurm job (sbatch) on the nodes the policy chose, one task per GPU;
 * the inventory comes from `sinfo --json`/`squeue --json`, exit codes from the task wrapper's
 * exit files on the shared job directory. Replicas outlive the server (they are Slurm's).
 */
export class SlurmBackend implements Backend {
  readonly name = 'slurm';
  private order: string[] = [];
  private inventory: BackendNode[] = [];
  /** Partitions of the nodes sinfo listed at the last refresh, sorted. */
  private partitionNames: string[] = [];
  private jobs: SlurmJob[] = [];
  private jobsAt_ms = 0;
  private unavailable = '';
  /** Why the partition accepts no new jobs, as of the last refresh (launchRefusal). */
  private refusal: string | undefined;
  private listener: (exit: ReplicaExit) => void = () => {};
  private readonly watched = new Map<string, Watched>();
  private readonly timer: NodeJS.Timeout;
  private polling = false;
  private readonly log: (line: string) => void;

  constructor(private readonly options: SlurmBackendOptions) {
    this.log = options.log ?? (() => {});
    this.timer = setInterval(() => void this.poll(), options.poll_ms ?? 1000);
    this.timer.unref();
  }

  nodes(): readonly BackendNode[] {
    return this.inventory;
  }

  async refresh(): Promise<void> {
    try {
      // `%a`: each partition's availability (up, drain, down, inact), for launchRefusal.
      const [sinfo, jobs, avail] = await Promise.all([
        this.slurm('sinfo', ['--json']),
        this.queue(true),
        this.slurm('sinfo', ['-h', '-o', '%P|%a']),
      ]);
      const listed = parseSinfo(sinfo);
      const inv = buildInventory(
        this.order,
        listed,
        jobs,
        (name) => name.startsWith(`${this.options.name_prefix}-`),
        this.options.partition,
      );
      this.partitionNames = [...new Set(listed.flatMap((n) => n.partitions))].sort();
      this.order = inv.order;
      this.inventory = inv.nodes;
      this.refusal = partitionRefusal(avail, this.options.partition);
      this.unavailable = '';
    } catch (error) {
      this.unavailable = (error as Error).message;
      throw error instanceof GoodputError
        ? error
        : new GoodputError('E_BACKEND_UNAVAILABLE', `cannot read Slurm's inventory: ${(error as Error).message}`);
    }
  }

  /** The cluster's partitions as of the last refresh (for a start-up check of --partition). */
  partitions(): readonly string[] {
    return this.partitionNames;
  }

  /** Whether the node has GPUs of several types (its replicas then ask Slurm for the chosen type). */
  private mixedNode(name: string): boolean {
    const node = this.inventory.find((n) => n.name === name);
    return new Set(node?.devices.map((d) => d.name) ?? []).size > 1;
  }

  onExit(listener: (exit: ReplicaExit) => void): void {
    this.listener = listener;
  }

  async launch(req: LaunchRequest): Promise<LaunchedReplica[]> {
    if (this.unavailable) throw new GoodputError('E_BACKEND_UNAVAILABLE', this.unavailable);
    const dirs = jobDirs(req.job_dir);
    for (const d of [dirs.checkpoint, dirs.logs, dirs.run]) mkdirSync(d, { recursive: true, mode: 0o700 });
    const shares = sharesOf(req, this.inventory);
    const world = req.devices.length;
    const as = submitAs(req, world, this.options.account); // run-as-owner.ts: the owner's dirs, env, account
    for (let rank = 0; rank < world; rank++)
      for (const s of ['.pid', '.pid.tmp', '.exit', '.exit.tmp'])
        rmSync(runFileBase(req.job_dir, req.attempt, rank) + s, { force: true });
    const master = this.inventory.find((n) => n.name === shares[0]!.node)!;
    const base = { ...as.env, ...this.options.env, ...req.env };
    const vars = contractEnv({
      job_id: req.job_id,
      attempt: req.attempt,
      rank_nodes: rankNodes(shares),
      master_addr: master.address,
      master_port: await freePort(req.port_range),
      api_url: req.api_url,
      token: req.token,
      checkpoint_dir: dirs.checkpoint,
      restarts: req.restarts ?? 0,
      max_restarts: req.max_restarts ?? 0,
      ...(req.gpu_type !== undefined ? { gpu_type: req.gpu_type } : {}),
      preset: (name) => base[name] !== undefined,
    });
    // Each task picks its rank's variables from the lists (TASK_WRAPPER).
    const env: Record<string, string> = { ...base, ...vars.common, ...perRankLists(vars.ranks) };
    // The job's venv/conda/env_setup, as on the local backend (setup markers are per host name).
    const plan = execPlan(req.environment ?? {}, req.command, env, { state_dir: dirs.run, attempt: req.attempt });
    const script = batchScript({
      job_name: this.jobName(req.job_id, req.attempt),
      shares,
      run_dir: dirs.run,
      logs_dir: dirs.logs,
      attempt: req.attempt,
      workdir: req.workdir,
      command: plan.command,
      ...(this.options.partition ? { partition: this.options.partition } : {}),
      ...(as.account ? { account: as.account } : {}),
      ...(this.options.qos ? { qos: this.options.qos } : {}),
      ...(req.gpu_type !== undefined && req.gpu_type !== 'gpu' && shares.some((s) => this.mixedNode(s.node))
        ? { gpu_type: req.gpu_type }
        : {}),
    });
    let id: string;
    try {
      const o = { exact_env: plan.env, input: script, ...as.as };
      id = (await this.slurm('sbatch', ['--parsable'], o)).trim().split(';')[0]!;
    } catch (error) {
      if (error instanceof GoodputError && error.code === 'E_BACKEND_UNAVAILABLE') throw error;
      const message = (error as Error).message;
      // A drained or inactive partition, nodes not available: Slurm's state, not the job's fault.
      if (isStateRefusal(message))
        throw new GoodputError('E_LAUNCH_HELD', `Slurm refuses new jobs now: ${slurmWords(message)}`);
      throw new GoodputError('E_LAUNCH', `sbatch rejected the job: ${message}`);
    }
    if (!/^\d+$/.test(id)) throw new GoodputError('E_LAUNCH', `sbatch answered '${id}' instead of a job id`);
    this.watched.set(id, {
      job_id: req.job_id,
      attempt: req.attempt,
      job_dir: req.job_dir,
      ranks: new Set(Array.from({ length: world }, (_, r) => r)),
      since_ms: Date.now(),
    });
    this.jobsAt_ms = 0;
    return launchedReplicas(req, shares, this.inventory, id, dirs.logs);
  }

  /**
   * While Slurm lists the attempt's job as PENDING (or no job list read since its submission
   * shows it yet): Slurm's reason. Once a list shows it running or ended, undefined for good.
   */
  held(launch_id: string): string | undefined {
    const w = this.watched.get(launch_id);
    if (!w || w.left_pending) return undefined;
    if (this.jobsAt_ms <= w.since_ms) return `submitted as Slurm job ${launch_id}; waiting for Slurm to start it`;
    const pending = this.jobs.find(
      (j) => (String(j.job_id) === launch_id || String(j.het_job_id) === launch_id) && j.state === 'PENDING',
    );
    if (pending) return pendingWords(launch_id, pending.reason);
    w.left_pending = true;
    return undefined;
  }

  /** Refuses environment variables sbatch or srun would read as their own options (slurm-states.ts). */
  refuseSpec(spec: SpecToCarry): string | undefined {
    return slurmSpecRefusal(spec);
  }

  /** While the partition (--partition, else Slurm's default) is drained, down or inactive: why, as of the last refresh. */
  launchRefusal(): string | undefined {
    return this.refusal;
  }

  checkOwner(account: RunAs, owner: string): Promise<void> {
    return checkOwner(account, { ...this.options, server_account: this.options.account }, owner);
  }

  async adopt(ref: ReplicaRef): Promise<'alive' | number> {
    const recorded = readExitFile(ref.job_dir, ref.attempt, ref.rank);
    if (recorded !== undefined) return recorded;
    let jobs: SlurmJob[] | undefined;
    try {
      jobs = await this.queue(false);
    } catch (error) {
      this.log(`slurm: cannot check job ${ref.launch_id} now (${(error as Error).message}); watching it`);
    }
    if (jobs && !isActive(jobs, ref.launch_id)) return readExitFile(ref.job_dir, ref.attempt, ref.rank) ?? EXIT_LOST;
    const w = this.watched.get(ref.launch_id) ?? {
      job_id: ref.job_id,
      attempt: ref.attempt,
      job_dir: ref.job_dir,
      ranks: new Set<number>(),
      since_ms: Date.now(),
      left_pending: true,
    };
    w.ranks.add(ref.rank);
    this.watched.set(ref.launch_id, w);
    return 'alive';
  }

  /**
   * The exit file when the task wrapper wrote one, else 'alive': Slurm ends the processes of an
   * ended job itself, and `poll` reports the exits of jobs that end without exit files. A rank
   * this backend watches stays 'alive' until `poll` reports it through the listener: only the poll
   * tells (and may wait to learn, OUTSIDE_REASON_WAIT_MS) why Slurm ended the job, which an exit
   * recorded from here would lose.
   */
  probe(ref: ReplicaRef): 'alive' | number {
    if (this.watched.get(ref.launch_id)?.ranks.has(ref.rank)) return 'alive';
    return readExitFile(ref.job_dir, ref.attempt, ref.rank) ?? 'alive';
  }

  signal(ref: ReplicaRef, signal: 'SIGTERM' | 'SIGKILL'): void {
    const asked = signal === 'SIGKILL' ? this.ask.kill(ref) : Promise.resolve(); // the wrapper kills first
    const w = this.watched.get(ref.launch_id);
    if (!w || w.stop === signal || w.stop === 'SIGKILL') return; // one scancel per Slurm job, not per rank
    w.stop = signal;
    // A stop reaches the program's main process alone (TASK_WRAPPER forwards STOP_SIGNAL as SIGTERM).
    // Always signalled, never judged 'pending' from the last squeue: a job that started since
    // would get a plain scancel's SIGTERM on every process (its DataLoader workers too).
    const args = signal === 'SIGKILL' ? [ref.launch_id] : [`--signal=${STOP_SIGNAL}`, ref.launch_id];
    void asked
      .then(() => this.slurm('scancel', args))
      // A job that was still pending has no process to signal: cancel it (nothing ran, nothing to save).
      .catch((error: unknown) =>
        /pending/i.test((error as Error).message) ? this.slurm('scancel', [ref.launch_id]) : Promise.reject(error),
      )
      .catch((error: unknown) => {
        const message = (error as Error).message;
        if (/Invalid job id|already complet/i.test(message)) return; // already gone: nothing to stop
        w.stop = undefined; // try again at the next request
        // E_SLURM's message starts with the command line; an unreachable slurmctld's does not.
        this.log(`slurm: ${message.startsWith('scancel ') ? message : `scancel ${args.join(' ')}: ${message}`}`);
      });
  }

  readonly hangDrains = 'node'; // Slurm picks the GPUs within a node (`--gres` per node): backend.ts
  private readonly ask = new FactsAsk((args) => this.slurm('scancel', args).catch((e: Error) => this.log(e.message)));
  /** Stacks and facts through `scancel --signal=23` and the task wrapper (ask-facts.ts). */
  readonly requestStacks = (ref: ReplicaRef): boolean => this.ask.stacks(ref);
  readonly processFacts = readFacts;
  readonly refreshFacts = (refs: readonly ReplicaRef[]): Promise<void> => this.ask.facts(refs);

  async abandon(job_id: string, _job_dir: string, attempt: number): Promise<void> {
    if (this.unavailable) throw new GoodputError('E_BACKEND_UNAVAILABLE', this.unavailable);
    const name = this.jobName(job_id, attempt);
    for (let i = 0; i < 240; i++) {
      const left = (await this.queue(false)).filter((j) => j.name === name && ACTIVE_JOB_STATES.has(j.state));
      if (left.length === 0) {
        // The attempt was never recorded: nobody waits for the exits of its Slurm jobs.
        for (const [id, w] of this.watched) if (w.job_id === job_id && w.attempt === attempt) this.watched.delete(id);
        return;
      }
      if (i === 0) {
        this.log(
          `slurm: cancelling Slurm job(s) ${left.map((j) => j.job_id).join(',')} left by an unrecorded launch of ${job_id} attempt ${attempt}`,
        );
        await this.slurm('scancel', [...new Set(left.map((j) => String(j.het_job_id || j.job_id)))]);
      }
      await new Promise((r) => setTimeout(r, 250));
      this.jobsAt_ms = 0;
    }
    throw new GoodputError('E_BACKEND_UNAVAILABLE', `Slurm job ${name} did not end after scancel`);
  }

  close(): void {
    clearInterval(this.timer);
    this.watched.clear();
    this.listener = () => {};
  }

  private jobName(job_id: string, attempt: number): string {
    return `${this.options.name_prefix}-${job_id}-${attempt}`;
  }

  /**
   * Runs a Slurm command. Unreachability marks the backend unavailable until the next successful
   * `refresh` (launches then fail fast instead of waiting on slurmctld at every tick).
   */
  private async slurm(command: string, args: readonly string[], o: SlurmRunOptions = {}): Promise<string> {
    try {
      return (await slurmRun(command, args, { env: this.options.env ?? {}, ...o })).stdout;
    } catch (error) {
      if (error instanceof GoodputError && error.code === 'E_BACKEND_UNAVAILABLE') this.unavailable = error.message;
      throw error;
    }
  }

  /** Slurm's job list, at most 0.5 s old unless `fresh`; `jobsAt_ms` is when its request began. */
  private async queue(fresh: boolean): Promise<SlurmJob[]> {
    if (fresh || Date.now() - this.jobsAt_ms > 500) {
      const asked_ms = Date.now();
      this.jobs = parseSqueue(await this.slurm('squeue', ['--json']));
      this.jobsAt_ms = asked_ms;
    }
    return this.jobs;
  }

  /** Reports exits: from exit files as they appear, and for ranks of Slurm jobs that ended without one. */
  private async poll(): Promise<void> {
    if (this.polling || this.watched.size === 0) return;
    this.polling = true;
    try {
      // Exit files first: Slurm changes a job's state before it signals the tasks, so a list read
      // after an unrequested exit shows why the job ended (an admin's scancel, a node down).
      const found = new Map<string, Map<number, number>>();
      let unrequested = false;
      for (const [id, w] of this.watched) {
        const codes = new Map<number, number>();
        for (const rank of w.ranks) {
          const code = readExitFile(w.job_dir, w.attempt, rank);
          if (code !== undefined) codes.set(rank, code);
        }
        found.set(id, codes);
        unrequested ||= codes.size > 0 && !w.stop;
      }
      let jobs: SlurmJob[] | undefined;
      try {
        jobs = await this.queue(unrequested);
      } catch (error) {
        this.log(`slurm: ${(error as Error).message}`);
      }
      const listed_ms = this.jobsAt_ms;
      for (const [id, w] of this.watched) {
        const entries = jobs?.filter((j) => String(j.job_id) === id || String(j.het_job_id) === id) ?? [];
        // A list read before the job was submitted (a launch during the read) does not show it yet.
        const ended =
          jobs !== undefined && listed_ms > w.since_ms && !entries.some((j) => ACTIVE_JOB_STATES.has(j.state));
        w.outside ??= outsideEnd(id, entries[0], w.stop !== undefined);
        const detail = w.outside;
        if (ended && w.ended_at_ms === undefined) w.ended_at_ms = Date.now();
        const late = w.ended_at_ms !== undefined && Date.now() - w.ended_at_ms >= EXIT_FILE_WAIT_MS;
        const signalled =
          w.stop === undefined &&
          detail === undefined &&
          !ended &&
          [...(found.get(id)?.values() ?? [])].some((c) => SIGNAL_EXIT_CODES.has(c));
        if (signalled) w.signalled_at_ms ??= Date.now();
        const holding = signalled && Date.now() - w.signalled_at_ms! < outsideReasonWait_ms(entries);
        for (const rank of [...w.ranks]) {
          let code = found.get(id)?.get(rank) ?? (late ? readExitFile(w.job_dir, w.attempt, rank) : undefined);
          if (code === undefined && late) code = w.stop && !started(w.job_dir, w.attempt, rank) ? 143 : EXIT_LOST;
          if (code === undefined || holding) continue;
          w.ranks.delete(rank);
          this.listener({ job_id: w.job_id, attempt: w.attempt, rank, exit_code: code, ...(detail ? { detail } : {}) });
        }
        if (w.ranks.size === 0) this.watched.delete(id);
      }
    } finally {
      this.polling = false;
    }
  }
}
