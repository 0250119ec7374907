/**
 * A Backend without processes, for tests of the code above it (the controller) in milliseconds:
 * its replicas are JavaScript programs (`node -e SCRIPT -- ARGS`, the form backends/conformance.ts
 * launches) run in this process, each in its own vm context with a `process` of its own (env,
 * argv, exit, signal handlers) and timers on an injected Clock (util/clock.ts). Passes
 * conformance.ts on the system clock; on a FakeClock, a replica's `setTimeout(…, 60_000)` takes
 * no wall time. The nodes, replicas and recorded exit codes live in a FakeCluster, which a second
 * FakeBackend on the same cluster sees as a restarted server sees its cluster.
 * Not for production: a program that loops forever blocks the server.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { GoodputError } from '../core/errors.js';
import { systemClock, type Clock, type TimerId } from '../util/clock.js';
import type { Backend, BackendNode, LaunchedReplica, LaunchRequest, ReplicaExit, ReplicaRef } from './backend.js';
import { contractEnv, nodeVisibleDevices } from './contract-env.js';
import { EXIT_LOST } from './backend.js';
import { jobDirs, replicaLogPath } from './run-files.js';

/** Exit code of a replica ended by SIGTERM without a handler (128 + 15). */
const EXIT_SIGTERM = 143;
/** Exit code of a replica ended by SIGKILL (128 + 9). */
const EXIT_SIGKILL = 137;

/** Thrown inside a program by `process.exit`, to unwind it; never escapes the fake. */
class ProgramExit {
  constructor(readonly code: number) {}
}

/** One replica of the fake cluster while it runs. */
interface FakeReplica {
  job_id: string;
  attempt: number;
  rank: number;
  node: string;
  timers: Set<TimerId>;
  handlers: Map<string, (() => void)[]>;
  /** The backend that reports its exit (the launcher, or one that adopted it); undefined after close. */
  watcher: FakeBackend | undefined;
}

const replicaKey = (job_id: string, attempt: number, rank: number): string => `${job_id}/${attempt}/${rank}`;
const attemptKey = (job_id: string, attempt: number): string => `${job_id}/${attempt}`;

/** The cluster a FakeBackend drives: nodes, running replicas, recorded exit codes (as a shared file system keeps them). */
export class FakeCluster {
  readonly running = new Map<string, FakeReplica>();
  /**
   * The running replicas of each attempt (`job/attempt`): an abandon ends an attempt's replicas
   * without reading every running one (each launch abandons first; at 16,000 replicas a scan per
   * launch was a quarter of bench:scale's launches).
   */
  private readonly byAttempt = new Map<string, Set<FakeReplica>>();
  readonly exits = new Map<string, number>();
  /** Set to a reason to make `refresh` fail with E_BACKEND_UNAVAILABLE. */
  unavailable: string | undefined;
  /**
   * Modules a program may `require` besides fs and path, by name: what a test lends its programs,
   * e.g. a report function that calls the controller in-process where a real replica would POST.
   */
  modules: Record<string, unknown> = {};
  private nextPort = 30000;

  /**
   * @param programless Replicas run no program: each runs until signalled (SIGTERM ends it with
   * 143), as `seed` adds them. For benches of the control plane at thousands of replicas
   * (bench:scale), where a vm context per replica would cost more than the server measured.
   */
  constructor(
    public nodes: BackendNode[] = [fakeNode('fake-0', 2), fakeNode('fake-1', 2)],
    readonly clock: Clock = systemClock,
    readonly programless = false,
  ) {}

  /** A port for MASTER_PORT, one per attempt. */
  port(): number {
    return this.nextPort++;
  }

  /**
   * Adds a replica that runs until signalled, as a restarted server finds one its predecessor
   * launched (bench:scale's store of 2,000 running jobs): it has no program, so SIGTERM ends it
   * with 143. A FakeBackend on this cluster adopts it.
   */
  seed(job_id: string, attempt: number, rank: number, node: string): void {
    const replica: FakeReplica = {
      job_id,
      attempt,
      rank,
      node,
      timers: new Set(),
      handlers: new Map(),
      watcher: undefined,
    };
    this.add(replica);
  }

  /** Records `replica` as running (its earlier exit code, if any, is forgotten). */
  add(replica: FakeReplica): void {
    const key = replicaKey(replica.job_id, replica.attempt, replica.rank);
    this.exits.delete(key);
    this.running.set(key, replica);
    const attempt = attemptKey(replica.job_id, replica.attempt);
    let set = this.byAttempt.get(attempt);
    if (!set) this.byAttempt.set(attempt, (set = new Set()));
    set.add(replica);
  }

  /** The running replicas of one attempt of a job. */
  attemptReplicas(job_id: string, attempt: number): FakeReplica[] {
    return [...(this.byAttempt.get(attemptKey(job_id, attempt)) ?? [])];
  }

  /** Ends a replica with `code`: records it and tells its watcher, once. */
  end(replica: FakeReplica, code: number): void {
    const key = replicaKey(replica.job_id, replica.attempt, replica.rank);
    if (!this.running.has(key)) return;
    this.running.delete(key);
    const attempt = attemptKey(replica.job_id, replica.attempt);
    const set = this.byAttempt.get(attempt);
    set?.delete(replica);
    if (set?.size === 0) this.byAttempt.delete(attempt);
    for (const t of replica.timers) this.clock.clear(t);
    replica.timers.clear();
    this.exits.set(key, code);
    replica.watcher?.report({ job_id: replica.job_id, attempt: replica.attempt, rank: replica.rank, exit_code: code });
  }
}

/** A node of `gpus` CPU slots named `name` (the fake's devices behave as the local backend's CPU slots). */
export function fakeNode(name: string, gpus: number, address = '127.0.0.1'): BackendNode {
  return {
    name,
    address,
    usable: gpus,
    note: '',
    devices: Array.from({ length: gpus }, (_, index) => ({ index, kind: 'cpu' as const, name: 'cpu-slot' })),
  };
}

export class FakeBackend implements Backend {
  readonly name = 'fake';
  private listener: ((exit: ReplicaExit) => void) | undefined;
  private closed = false;

  constructor(readonly cluster: FakeCluster = new FakeCluster()) {}

  nodes(): readonly BackendNode[] {
    return this.cluster.nodes;
  }

  async refresh(): Promise<void> {
    if (this.cluster.unavailable !== undefined)
      throw new GoodputError('E_BACKEND_UNAVAILABLE', `fake cluster unavailable: ${this.cluster.unavailable}`);
  }

  onExit(listener: (exit: ReplicaExit) => void): void {
    this.listener = listener;
  }

  /** Hands an exit to the listener (the cluster calls it for replicas this backend watches). */
  report(exit: ReplicaExit): void {
    if (!this.closed) this.listener?.(exit);
  }

  async launch(req: LaunchRequest): Promise<LaunchedReplica[]> {
    const program = programOf(req.command);
    if (!program)
      throw new GoodputError(
        'E_LAUNCH',
        `the fake backend runs only 'node -e SCRIPT' programs, got ${req.command[0] ?? '(empty)'}`,
      );
    const nodes = req.nodes.map((i) => this.cluster.nodes[i]);
    if (nodes.some((n) => !n || n.usable === 0))
      throw new GoodputError('E_LAUNCH', `node(s) ${req.nodes.join(',')} not usable`);
    const dirs = jobDirs(req.job_dir);
    for (const d of [dirs.checkpoint, dirs.logs, dirs.run]) mkdirSync(d, { recursive: true });
    const port = this.cluster.port();
    const world = req.devices.length;
    const started_at_ms = this.cluster.clock.now_ms();
    const launched: LaunchedReplica[] = [];
    // The contract's variables, as every backend builds them (contract-env.ts).
    const vars = contractEnv({
      job_id: req.job_id,
      attempt: req.attempt,
      rank_nodes: req.nodes,
      master_addr: nodes[0]!.address,
      master_port: port,
      api_url: req.api_url,
      token: req.token,
      checkpoint_dir: dirs.checkpoint,
      restarts: req.restarts ?? 0,
      max_restarts: req.max_restarts ?? 0,
      ...(req.gpu_type !== undefined ? { gpu_type: req.gpu_type } : {}),
      preset: (name) => req.env[name] !== undefined,
    });
    for (let rank = 0; rank < world; rank++) {
      const node = nodes[rank]!;
      const device = req.devices[rank]!;
      const env: Record<string, string> = { ...req.env, ...vars.common, ...vars.ranks[rank] };
      if (node.devices.find((d) => d.index === device)?.kind === 'gpu')
        env.CUDA_VISIBLE_DEVICES = nodeVisibleDevices(req.nodes, req.devices, rank);
      const log_path = replicaLogPath(req.job_dir, rank);
      appendFileSync(
        log_path,
        `--- goodput: attempt ${req.attempt}, rank ${rank}/${world}, node ${node.name}, device ${device} (fake backend) ---\n`,
      );
      const replica: FakeReplica = {
        job_id: req.job_id,
        attempt: req.attempt,
        rank,
        node: node.name,
        timers: new Set(),
        handlers: new Map(),
        watcher: this,
      };
      this.cluster.add(replica);
      launched.push({ rank, device, node: node.name, launch_id: '', pid: 0, proc_start: '', log_path, started_at_ms });
      if (!this.cluster.programless)
        this.start(replica, program.script, [process.execPath, ...program.args], env, req.workdir, log_path);
    }
    return launched;
  }

  async adopt(ref: ReplicaRef): Promise<'alive' | number> {
    const replica = this.cluster.running.get(replicaKey(ref.job_id, ref.attempt, ref.rank));
    if (!replica) return this.cluster.exits.get(replicaKey(ref.job_id, ref.attempt, ref.rank)) ?? EXIT_LOST;
    replica.watcher = this;
    return 'alive';
  }

  probe(ref: ReplicaRef): 'alive' | number {
    const key = replicaKey(ref.job_id, ref.attempt, ref.rank);
    return this.cluster.running.has(key) ? 'alive' : (this.cluster.exits.get(key) ?? EXIT_LOST);
  }

  signal(ref: ReplicaRef, signal: 'SIGTERM' | 'SIGKILL'): void {
    const replica = this.cluster.running.get(replicaKey(ref.job_id, ref.attempt, ref.rank));
    if (!replica) return;
    if (signal === 'SIGKILL') return this.cluster.end(replica, EXIT_SIGKILL);
    const handlers = replica.handlers.get('SIGTERM') ?? [];
    if (handlers.length === 0) return this.cluster.end(replica, EXIT_SIGTERM);
    for (const h of handlers) this.guard(replica, h);
  }

  async abandon(job_id: string, _job_dir: string, attempt: number): Promise<void> {
    for (const replica of this.cluster.attemptReplicas(job_id, attempt)) this.cluster.end(replica, EXIT_SIGKILL);
  }

  close(): void {
    this.closed = true;
    for (const replica of this.cluster.running.values()) if (replica.watcher === this) replica.watcher = undefined;
  }

  /** Runs the program's top level in a context of its own; it ends when it exits or has no timer left. */
  private start(
    replica: FakeReplica,
    script: string,
    argv: string[],
    env: Record<string, string>,
    cwd: string,
    log_path: string,
  ): void {
    const clock = this.cluster.clock;
    const timer =
      (repeat: boolean) =>
      (callback: () => void, ms = 0): TimerId => {
        const t: TimerId = (repeat ? clock.setInterval : clock.setTimeout).call(
          clock,
          () => {
            if (!repeat) replica.timers.delete(t);
            this.guard(replica, callback);
          },
          ms,
        );
        replica.timers.add(t);
        return t;
      };
    const log = (...parts: unknown[]) => appendFileSync(log_path, parts.map(String).join(' ') + '\n');
    const proc = {
      env,
      argv,
      pid: 0,
      platform: process.platform,
      cwd: () => cwd,
      exit: (code = 0): never => {
        throw new ProgramExit(Number(code));
      },
      on: (event: string, handler: () => void): void => {
        replica.handlers.set(event, [...(replica.handlers.get(event) ?? []), handler]);
      },
      stdout: { write: (s: string) => (log(s), true) },
      stderr: { write: (s: string) => (log(s), true) },
    };
    const modules: Record<string, unknown> = { fs, 'node:fs': fs, path, 'node:path': path, ...this.cluster.modules };
    const context = createContext({
      process: proc,
      require: (name: string) => {
        if (!(name in modules))
          throw new Error(`the fake backend provides only ${Object.keys(modules).join(', ')}, not ${name}`);
        return modules[name];
      },
      console: { log, error: log, warn: log, info: log },
      setTimeout: timer(false),
      setInterval: timer(true),
      clearTimeout: (t: TimerId) => (clock.clear(t), replica.timers.delete(t)),
      clearInterval: (t: TimerId) => (clock.clear(t), replica.timers.delete(t)),
      Date,
      JSON,
      Math,
      Number,
      String,
      Object,
      Array,
      Error,
      Promise,
    });
    // A process starts after its launch returns: an exit is never reported inside `launch`.
    setImmediate(() => this.guard(replica, () => runInContext(script, context)));
  }

  /** Runs part of a program: `process.exit` ends it with its code, a throw with 1, an empty timer list with 0. */
  private guard(replica: FakeReplica, part: () => void): void {
    const key = replicaKey(replica.job_id, replica.attempt, replica.rank);
    if (!this.cluster.running.has(key)) return;
    try {
      part();
    } catch (error) {
      if (error instanceof ProgramExit) return this.cluster.end(replica, error.code);
      return this.cluster.end(replica, 1);
    }
    if (replica.timers.size === 0) this.cluster.end(replica, 0);
  }
}

/** The script and arguments of `node -e SCRIPT [--] ARGS`, or undefined for any other command. */
function programOf(command: readonly string[]): { script: string; args: string[] } | undefined {
  const [exe, flag, script, ...rest] = command;
  if (!exe || !(exe === process.execPath || path.basename(exe) === 'node') || flag !== '-e' || script === undefined)
    return undefined;
  return { script, args: rest[0] === '--' ? rest.slice(1) : rest };
}
