/**
 * How the control plane runs replicas. A backend starts the processes of one attempt with the
 * environment of docs/contract.md, signals them, and reports each replica's exit exactly once
 * per watch. Implementations: local/local-backend.ts (one process per replica on this machine).
 */

import type { JobEnvironment } from './job-env.js';

/** One device a replica can hold: a GPU, or a CPU slot that behaves like one. */
export interface DeviceInfo {
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
  /** Device index per replica (its length is the world size). */
  devices: readonly number[];
  num_nodes: number;
  api_url: string;
  token: string;
  /** Job-private directory: checkpoint/, logs/, run/ live under it. */
  job_dir: string;
  /** Run the replicas as this account (never root); their checkpoint directory becomes theirs. */
  run_as?: RunAs;
}

/** A started replica, as the store records it. */
export interface LaunchedReplica {
  rank: number;
  device: number;
  pid: number;
  /** Start time read from /proc/<pid>/stat, to tell a re-used pid apart; '' if unknown. */
  proc_start: string;
  log_path: string;
  started_at_ms: number;
}

/** Identifies a replica process for signals and adoption. */
export interface ReplicaRef {
  job_id: string;
  attempt: number;
  rank: number;
  pid: number;
  proc_start: string;
  job_dir: string;
}

/** A replica's end. `exit_code` follows the shell convention: 128 + n when killed by signal n. */
export interface ReplicaExit {
  job_id: string;
  attempt: number;
  rank: number;
  exit_code: number;
}

export interface Backend {
  readonly name: string;
  /** Devices this backend places replicas on (stable for the backend's lifetime). */
  devices(): readonly DeviceInfo[];
  /**
   * Starts every replica of one attempt, each in its own process group. All or nothing: if one
   * fails to start, the others are killed and the call throws GoodputError('E_LAUNCH').
   */
  launch(request: LaunchRequest): Promise<LaunchedReplica[]>;
  /**
   * Watches a replica this process did not start (after a server restart). Returns 'alive' when
   * it runs (its exit will be reported through `onExit`), or its exit code now (the recorded
   * one, else 137 = lost).
   */
  adopt(ref: ReplicaRef): 'alive' | number;
  /**
   * Checks a replica without watching it: 'alive' while its process runs, else its exit code
   * (the recorded one, else 137 = lost); what is left of an ended replica's process group is
   * killed. Idempotent. The controller calls it periodically, so an exit the listener missed is
   * still recorded.
   */
  probe(ref: ReplicaRef): 'alive' | number;
  /** Signals the replica's whole process group. No-op when it is gone. */
  signal(ref: ReplicaRef, signal: 'SIGTERM' | 'SIGKILL'): void;
  /** Kills processes left by an attempt whose launch was never recorded (crash mid-launch). */
  abandon(job_dir: string, attempt: number): void;
  /** Registers the exit listener (one; replaces the previous). */
  onExit(listener: (exit: ReplicaExit) => void): void;
  /** Stops watching; never kills replicas (they survive a server restart by design). */
  close(): void;
}
