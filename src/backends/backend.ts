/**
 * How the control plane runs replicas on a cluster of nodes with GPUs. A backend reports its
 * nodes (the inventory), starts the processes of one attempt with the environment of
 * docs/contract.md, signals them, and reports each replica's exit exactly once per watch.
 * Implementations: local/local-backend.ts (one node: this machine, one process per replica) and
 * slurm/slurm-backend.ts (one Slurm job per attempt, one task per GPU). Both pass
 * conformance.ts.
 */

import type { PortRange } from './contract-env.js';
import type { JobEnvironment } from './job-env.js';

/** One device a replica can hold: a GPU, or a CPU slot that behaves like one. */
export interface DeviceInfo {
  /** Index on its node (a GPU index as CUDA numbers them there, or a slot number). */
  index: number;
  kind: 'gpu' | 'cpu';
  name: string;
  uuid?: string;
  memory_mib?: number;
}

/** The Unix account a job's replicas run as (multi-user mode); absent: the server's own. */
export interface RunAs {
  user: string;
  uid: number;
  gid: number;
  home: string;
  /** Slurm account its jobs are charged to (`sbatch --account`); absent: the server's --account, else Slurm's default. */
  slurm_account?: string;
}

/**
 * One node of the inventory. A backend keeps the order of its nodes stable for its lifetime and
 * across restarts on the same cluster (node index = position), since stored allocations name
 * nodes by index.
 */
export interface BackendNode {
  name: string;
  /** Address other nodes reach this node at (MASTER_ADDR when it hosts rank 0). */
  address: string;
  devices: readonly DeviceInfo[];
  /**
   * How many of `devices` Goodput may hold now: 0 on a drained or down node, fewer than all when
   * work Goodput did not launch holds some.
   */
  usable: number;
  /** Why fewer than all devices are usable ('' when all are). */
  note: string;
}

/** What the control plane can read of a replica's main process (a plain job's hang evidence). */
export interface ProcessFacts {
  /** /proc state letter and meaning, e.g. `T (stopped)`, `S (sleeping)`. */
  state: string;
  /** CPU seconds (user + system) it used so far. */
  cpu_s: number;
}

/** Everything needed to start the replicas of one attempt of a job. */
export interface LaunchRequest {
  job_id: string;
  attempt: number;
  /** argv, never interpolated by a shell. */
  command: readonly string[];
  workdir: string;
  /** The user's variables; the contract's variables are added on top. */
  env: Readonly<Record<string, string>>;
  /** The job's venv/conda prefix and setup step (job-env.ts); absent: run the command as is. */
  environment?: JobEnvironment;
  /** Device index (on its node) per replica; its length is the world size. */
  devices: readonly number[];
  /** Node index (position in `nodes()`) per replica, parallel to `devices`. */
  nodes: readonly number[];
  num_nodes: number;
  api_url: string;
  token: string;
  /** Job-private directory: checkpoint/, logs/, run/ live under it. */
  job_dir: string;
  /** Run the replicas as this account (never root); their checkpoint directory becomes theirs. */
  run_as?: RunAs;
  /** Ports MASTER_PORT may take (`goodput up --port-range`); absent: any free port. */
  port_range?: PortRange;
  /** GPU type of the attempt's devices (backends/device-type.ts; one type per job): GOODPUT_GPU_TYPE. */
  gpu_type?: string;
  /** Restarts after failures so far and the most allowed (TORCHELASTIC_RESTART_COUNT / _MAX_RESTARTS); default 0. */
  restarts?: number;
  max_restarts?: number;
}

/** A started replica, as the store records it. */
export interface LaunchedReplica {
  rank: number;
  device: number;
  /** Name of the node it runs on. */
  node: string;
  /** Backend's id of the attempt (the Slurm job id); '' when the backend has none. */
  launch_id: string;
  /** Process id on the server's machine; 0 when the replica runs elsewhere. */
  pid: number;
  /** Start time read from /proc/<pid>/stat, to tell a re-used pid apart; '' if unknown. */
  proc_start: string;
  log_path: string;
  started_at_ms: number;
}

/** Identifies a replica for signals and adoption. */
export interface ReplicaRef {
  job_id: string;
  attempt: number;
  rank: number;
  node: string;
  launch_id: string;
  pid: number;
  proc_start: string;
  job_dir: string;
}

// A replica's end, as a backend reports it and the store records it (store/store.ts).
export type { ReplicaExit } from '../store/types.js';

/** What of a job's spec a backend passes to its processes (`Backend.refuseSpec`). */
export interface SpecToCarry {
  command: readonly string[];
  workdir: string;
  env: Readonly<Record<string, string>>;
}

export interface Backend {
  readonly name: string;
  /** The inventory as last refreshed (stable order, see BackendNode). */
  nodes(): readonly BackendNode[];
  /**
   * Re-reads the inventory (called before every scheduling round). On failure keeps the last
   * inventory and throws GoodputError('E_BACKEND_UNAVAILABLE') with what to check.
   */
  refresh(): Promise<void>;
  /**
   * Starts every replica of one attempt. All or nothing: if one fails to start, the others are
   * killed and the call throws GoodputError('E_LAUNCH') (a rejection of the job itself, e.g. by
   * the cluster's scheduler), GoodputError('E_LAUNCH_HELD') (refused for the cluster's state: a
   * drained or down partition, nodes not available; the job waits and the launch is retried) or
   * GoodputError('E_BACKEND_UNAVAILABLE') (retry later).
   */
  launch(request: LaunchRequest): Promise<LaunchedReplica[]>;
  /**
   * Watches a replica this process did not start (after a server restart). Returns 'alive' when
   * it runs (its exit will be reported through `onExit`), or its exit code now (the recorded
   * one, else 137 = lost).
   */
  adopt(ref: ReplicaRef): Promise<'alive' | number>;
  /**
   * Checks a replica without watching it: 'alive' while it runs, else its exit code (the
   * recorded one, else 137 = lost); what is left of an ended replica's processes is killed.
   * Idempotent. The controller calls it periodically, so an exit the listener missed is still
   * recorded.
   */
  probe(ref: ReplicaRef): 'alive' | number;
  /**
   * Signals the replica. SIGTERM reaches its main process only (the program the command started,
   * not the helpers it forked); SIGKILL ends every process of the replica. Once the main process
   * exits, the backend kills what is left of the replica. No-op when it is gone. docs/contract.md, "Stops".
   */
  signal(ref: ReplicaRef, signal: 'SIGTERM' | 'SIGKILL'): void;
  /**
   * Ends what an attempt whose launch was never recorded left running (crash mid-launch) and
   * resolves once it is gone, so a relaunch never runs beside it.
   */
  abandon(job_id: string, job_dir: string, attempt: number): Promise<void>;
  /**
   * Why the cluster's scheduler still holds an attempt this backend launched (`launch_id` of its
   * replicas) before any of its processes run, in the scheduler's words (e.g. `Slurm job 12 is
   * PENDING (PartitionDown)`); undefined once they run, once it ended. Reads the backend's last
   * view of the cluster (no I/O). The controller records an attempt as running only once this is
   * undefined: until then the job stays `starting` with this reason, its devices are not counted
   * as in use and hung detection has not begun. Optional: a backend that starts processes at
   * launch (local, fake) has no such method.
   */
  held?(launch_id: string): string | undefined;
  /**
   * Why this backend cannot pass a job's command, workdir or environment to its processes as
   * given (checked at submit, so the job is refused with the reason instead of failing or
   * running elsewhere at launch), or undefined when it can. Optional: a backend that passes argv,
   * workdir and environment to its processes as given has no such method.
   */
  refuseSpec?(spec: SpecToCarry): string | undefined;
  /**
   * Why the cluster accepts no new work now (a drained, down or inactive Slurm partition), in
   * words (e.g. `Slurm partition gpu is draining`), or undefined when a launch may start now. Reads
   * the backend's view as of its last `refresh` (no I/O). While it says so, the controller stops no
   * running job for a rescale or a preemption (its relaunch would only wait): a drain stops new
   * work, never work that runs. Optional: a backend whose launches the cluster never refuses has no
   * such method.
   */
  launchRefusal?(): string | undefined;
  /**
   * Multi-user mode, at submit: throws E_SPEC (saying what an admin changes) when the cluster
   * would refuse every job of `account` (e.g. Slurm refusing the user's Slurm account). Optional:
   * a backend without it accepts every account the server can run as.
   */
  checkOwner?(account: RunAs, owner: string): Promise<void>;
  /**
   * The PATH a replica's command is looked up on, where this backend runs replicas on the
   * server's own machine with the server's environment (the local backend); undefined, or no
   * such method, where they run elsewhere (a Slurm compute node's environment is not known here).
   * Admission checks the interpreter a job's replicas would run only where it is known.
   */
  replicaPath?(): string | undefined;
  /**
   * Asks the replica's main process to write its Python stacks (SIGUSR1: the SDK registers a
   * faulthandler dump to its checkpoint directory, rank_summary.py); false when it could not be
   * asked. Optional: a backend without it gives no stacks.
   */
  requestStacks?(ref: ReplicaRef): boolean;
  /**
   * The replica's main process as /proc shows it, or undefined (gone, or not read). Optional. A
   * backend whose replicas run on other machines answers what `refreshFacts` or `requestStacks`
   * last read there.
   */
  processFacts?(ref: ReplicaRef): ProcessFacts | undefined;
  /**
   * Has the replicas' facts read afresh where they run (Slurm: by the task wrapper on each node)
   * and resolves once they answered or after a few seconds. Optional: a backend that reads them
   * directly (local) has none.
   */
  refreshFacts?(refs: readonly ReplicaRef[]): Promise<void>;
  /**
   * What a hung rank's restart must avoid: 'node' where the cluster's scheduler, not Goodput,
   * picks which of a node's devices a replica gets (Slurm, `--gres` per node), so the hung device
   * cannot be kept out alone; absent: the device alone.
   */
  readonly hangDrains?: 'node';
  /** Registers the exit listener (one; replaces the previous). */
  onExit(listener: (exit: ReplicaExit) => void): void;
  /** Stops watching; never kills replicas (they survive a server restart by design). */
  close(): void;
}

export { EXIT_LOST } from '../store/lifecycle.js';
import type { ReplicaExit } from '../store/types.js';
