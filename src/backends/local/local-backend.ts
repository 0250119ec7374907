import { spawn } from 'node:child_process';
import { sweepMarked } from './containment.js';
import { closeSync, existsSync, fchownSync, mkdirSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { GoodputError } from '../../core/errors.js';
import {
  EXIT_LOST,
  type Backend,
  type BackendNode,
  type DeviceInfo,
  type LaunchedReplica,
  type LaunchRequest,
  type ReplicaExit,
  type ReplicaRef,
  type ProcessFacts,
} from '../backend.js';
import { contractEnv, nodeVisibleDevices } from '../contract-env.js';
import { jobDirs, readExitFile, replicaLogName, runFileBase } from '../run-files.js';
import { LOG_CAP_MIN_BYTES, LOG_WRITER, WRITER_FILES } from './log-writer.js';
import { freePort, isAlive, killGroup, procFacts, procGroup, procStart } from './process-info.js';
import { prepareOwnerDirs } from './run-as.js';
import { replicaExec, workdirProblem } from './replica-exec.js';
import { readWrapperPids, waitForExec, WRAPPER } from './wrapper.js';

export { jobDirs } from '../run-files.js';

export { EXIT_LOST } from '../backend.js';
export { readWrapperPids } from './wrapper.js';

/** Name of the local backend's one node. */
export const LOCAL_NODE = 'local';

/** Options of the local backend. */
export interface LocalBackendOptions {
  devices: readonly DeviceInfo[];
  /** How often adopted replicas are polled (ms). Default 500. */
  poll_ms?: number;
  /**
   * Cap of each replica log (bytes), kept by the replica's log writer as it writes (log-writer.ts;
   * at least LOG_CAP_MIN_BYTES). 0 or absent: no cap, the replica writes its log directly.
   */
  log_limit_bytes?: number;
}

/** Runs each replica as a local process in its own process group, logs appended per rank. */
export class LocalBackend implements Backend {
  readonly name = 'local';
  private readonly deviceList: readonly DeviceInfo[];
  private listener: (exit: ReplicaExit) => void = () => {};
  private readonly adopted = new Map<string, ReplicaRef>();
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly logCap: number;

  constructor(options: LocalBackendOptions) {
    this.deviceList = options.devices;
    const cap = options.log_limit_bytes ?? 0;
    this.logCap = cap > 0 ? Math.max(Math.round(cap), LOG_CAP_MIN_BYTES) : 0;
    this.timer = setInterval(() => this.pollAdopted(), options.poll_ms ?? 500);
    this.timer.unref();
  }

  nodes(): readonly BackendNode[] {
    return [
      { name: LOCAL_NODE, address: '127.0.0.1', devices: this.deviceList, usable: this.deviceList.length, note: '' },
    ];
  }

  /** The local inventory is fixed at construction. */
  async refresh(): Promise<void> {}

  onExit(listener: (exit: ReplicaExit) => void): void {
    this.listener = listener;
  }

  async launch(req: LaunchRequest): Promise<LaunchedReplica[]> {
    const dirs = jobDirs(req.job_dir);
    for (const d of [dirs.checkpoint, dirs.logs, dirs.run]) mkdirSync(d, { recursive: true, mode: 0o700 });
    const owner = req.run_as;
    if (owner) prepareOwnerDirs(req.job_dir, dirs, owner);
    const port = await freePort(req.port_range);
    const world = req.devices.length;
    const rank_nodes = req.devices.map(() => LOCAL_NODE);
    const vars = contractEnv({
      job_id: req.job_id,
      attempt: req.attempt,
      rank_nodes,
      master_addr: '127.0.0.1',
      master_port: port,
      api_url: req.api_url,
      token: req.token,
      checkpoint_dir: dirs.checkpoint,
      restarts: req.restarts ?? 0,
      max_restarts: req.max_restarts ?? 0,
      ...(req.gpu_type !== undefined ? { gpu_type: req.gpu_type } : {}),
      preset: (name) => req.env[name] !== undefined || (!req.run_as && process.env[name] !== undefined),
    });
    const launched: LaunchedReplica[] = [];
    try {
      for (let rank = 0; rank < world; rank++) {
        const device = req.devices[rank]!;
        const kind = this.deviceList.find((d) => d.index === device)?.kind ?? 'cpu';
        const contract: Record<string, string> = { ...vars.common, ...vars.ranks[rank] };
        if (kind === 'gpu') {
          contract.CUDA_VISIBLE_DEVICES = nodeVisibleDevices(rank_nodes, req.devices, rank);
          // The indices are nvidia-smi's (PCI bus order); CUDA's default order puts the fastest
          // GPU first, which on a machine of mixed types would hand the job another job's GPU.
          contract.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
        }
        const plan = replicaExec(req, dirs, contract);
        const log_path = join(dirs.logs, replicaLogName(rank));
        const base = join(dirs.run, `attempt-${req.attempt}-rank-${rank}`);
        for (const suffix of ['.pid', '.pid.tmp', '.exit', '.exit.tmp', ...WRITER_FILES])
          rmSync(base + suffix, { force: true });
        const fd = openSync(log_path, 'a', 0o600);
        if (owner) fchownSync(fd, owner.uid, owner.gid);
        writeSync(
          fd,
          `--- goodput: attempt ${req.attempt}, rank ${rank}/${world}, device ${device}, ${new Date().toISOString()} ---\n`,
        );
        const started_at_ms = Date.now();
        const { child, ref } = await new Promise<{ child: ReturnType<typeof spawn>; ref: ReplicaRef }>((ok, fail) => {
          const c = spawn(
            '/bin/sh',
            ['-c', WRAPPER, 'goodput-replica', base, log_path, String(this.logCap), LOG_WRITER, ...plan.command],
            {
              cwd: req.workdir,
              env: plan.env,
              detached: true,
              stdio: ['ignore', fd, fd],
            },
          );
          c.once('spawn', () => {
            // The exit listener is in place before anything awaits: a replica that ends while
            // `launch` still waits for its exec (exit 127 at once) is heard too.
            const r: ReplicaRef = {
              job_id: req.job_id,
              attempt: req.attempt,
              rank,
              node: LOCAL_NODE,
              launch_id: '',
              pid: c.pid!,
              proc_start: procStart(c.pid!),
              job_dir: req.job_dir,
            };
            c.once('exit', (code, signal) => this.finish(r, code, signal));
            ok({ child: c, ref: r });
          });
          c.once('error', fail);
        }).finally(() => closeSync(fd));
        await waitForExec(base + '.pid', () => child.exitCode !== null || child.signalCode !== null);
        child.unref();
        launched.push({
          rank,
          device,
          node: LOCAL_NODE,
          launch_id: '',
          pid: ref.pid,
          proc_start: ref.proc_start,
          log_path,
          started_at_ms,
        });
      }
    } catch (error) {
      for (const r of launched) killGroup(r.pid, 'SIGKILL');
      throw new GoodputError(
        'E_LAUNCH',
        `cannot start ${req.command[0]} in ${req.workdir}: ${workdirProblem(req.workdir) ?? (error as Error).message}`,
      );
    }
    return launched;
  }

  async adopt(ref: ReplicaRef): Promise<'alive' | number> {
    const status = this.probe(ref);
    if (status === 'alive') this.adopted.set(key(ref), ref);
    return status;
  }

  probe(ref: ReplicaRef): 'alive' | number {
    if (isAlive(ref.pid, ref.proc_start)) return 'alive';
    killGroup(ref.pid, 'SIGKILL');
    sweepMarked(ref.job_id, ref.attempt, ref.rank, ref.job_dir);
    return readExit(ref) ?? EXIT_LOST;
  }

  /**
   * SIGTERM goes to the program's main process alone (the command the wrapper started), so that
   * its helpers (DataLoader workers, pin-memory threads' processes, a shell's children) keep
   * running while it checkpoints; the rest of the group is killed once the wrapper ends
   * (`finish`) or by the SIGKILL of the grace period. SIGKILL goes to the whole group. Without a
   * main process to signal (not yet exec'd, already gone) SIGTERM falls back to the group.
   */
  signal(ref: ReplicaRef, signal: 'SIGTERM' | 'SIGKILL'): void {
    if (ref.proc_start !== '' && !isAlive(ref.pid, ref.proc_start)) return;
    if (signal === 'SIGTERM') {
      const main = readWrapperPids(runFileBase(ref.job_dir, ref.attempt, ref.rank) + '.pid')?.command;
      // The group check tells the program from an unrelated process that re-used its pid.
      if (
        main !== undefined &&
        Number.isInteger(main) &&
        main > 1 &&
        isAlive(main, '') &&
        procGroup(main) === ref.pid
      ) {
        try {
          process.kill(main, 'SIGTERM');
          return;
        } catch {
          // gone meanwhile: the group gets it
        }
      }
    }
    killGroup(ref.pid, signal);
  }

  requestStacks(ref: ReplicaRef): boolean {
    const main = this.mainProcess(ref);
    if (main === undefined) return false;
    try {
      process.kill(main, 'SIGUSR1');
      return true;
    } catch {
      return false;
    }
  }

  processFacts(ref: ReplicaRef): ProcessFacts | undefined {
    const main = this.mainProcess(ref);
    return main === undefined ? undefined : procFacts(main);
  }

  /** The program the replica's command started, when it still runs in the replica's group. */
  private mainProcess(ref: ReplicaRef): number | undefined {
    if (ref.proc_start !== '' && !isAlive(ref.pid, ref.proc_start)) return undefined;
    const main = readWrapperPids(runFileBase(ref.job_dir, ref.attempt, ref.rank) + '.pid')?.command;
    return main !== undefined && Number.isInteger(main) && main > 1 && procGroup(main) === ref.pid ? main : undefined;
  }

  async abandon(_job_id: string, job_dir: string, attempt: number): Promise<void> {
    const run = jobDirs(job_dir).run;
    if (!existsSync(run)) return;
    for (const name of readdirSync(run)) {
      if (!name.startsWith(`attempt-${attempt}-rank-`) || !name.endsWith('.pid')) continue;
      const pid = readWrapperPids(join(run, name))?.shell;
      if (pid !== undefined && Number.isInteger(pid) && pid > 1) killGroup(pid, 'SIGKILL');
    }
    sweepMarked(_job_id, attempt, undefined, job_dir);
  }

  /** Replicas run here with the server's environment (replica-exec.ts; an owner's keeps its PATH too). */
  replicaPath(): string | undefined {
    return process.env.PATH;
  }

  /**
   * Stops acting on replicas: no more polls, and an exit of a replica this backend launched is no
   * longer swept after. A later backend (a restarted server in the same process) owns them, and
   * may relaunch the same attempt: a sweep by this one would kill that launch's processes.
   */
  close(): void {
    clearInterval(this.timer);
    this.adopted.clear();
    this.listener = () => {};
    this.closed = true;
  }

  private finish(ref: ReplicaRef, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closed) return;
    // Children the replica left behind, in its group or not (containment.ts), must not outlive it.
    killGroup(ref.pid, 'SIGKILL');
    sweepMarked(ref.job_id, ref.attempt, ref.rank, ref.job_dir);
    const recorded = readExit(ref);
    const exit_code = recorded ?? code ?? (signal ? 128 + signalNumber(signal) : EXIT_LOST);
    this.listener({ job_id: ref.job_id, attempt: ref.attempt, rank: ref.rank, exit_code });
  }

  private pollAdopted(): void {
    for (const [k, ref] of this.adopted) {
      if (isAlive(ref.pid, ref.proc_start)) continue;
      this.adopted.delete(k);
      killGroup(ref.pid, 'SIGKILL');
      sweepMarked(ref.job_id, ref.attempt, ref.rank, ref.job_dir);
      this.listener({
        job_id: ref.job_id,
        attempt: ref.attempt,
        rank: ref.rank,
        exit_code: readExit(ref) ?? EXIT_LOST,
      });
    }
  }
}

function key(ref: ReplicaRef): string {
  return `${ref.job_id}/${ref.attempt}/${ref.rank}`;
}

function readExit(ref: ReplicaRef): number | undefined {
  return readExitFile(ref.job_dir, ref.attempt, ref.rank);
}

const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};
function signalNumber(signal: NodeJS.Signals): number {
  return SIGNALS[signal] ?? 9;
}
