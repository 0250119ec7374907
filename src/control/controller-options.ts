/** Options and counters of the Controller (controller.ts). */
import type { Backend, RunAs } from '../backends/backend.js';
import type { PortRange } from '../backends/contract-env.js';
import type { Policy } from '../policy/policy.js';
import type { Store } from '../store/store.js';

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
  /** Ports MASTER_PORT is drawn from (`goodput up --port-range`); absent: any free port. */
  port_range?: PortRange;
  /** Restart backoff after a failure: base * 2^(failures - 1), at most 60 s. Default 1. */
  restart_backoff_s?: number;
  /** A failure this soon after a launch is early (a second one in a row fails the job). Default 10. */
  early_failure_s?: number;
  /** A reporting job silent for max(this, 10 step times) is hung: killed and restarted. Default 300. */
  hung_timeout_s?: number;
  /** Period of the check of this server's replicas (exits missed, hung jobs). Default 2. */
  watch_interval_s?: number;
  /** Minimum time between refits of a job's throughput model. Default 5. */
  refit_interval_s?: number;
  log?: (line: string) => void;
  now_ms?: () => number;
  /** Period of the launch/deadline pump (ms). Default 250. */
  tick_ms?: number;
  /** Multi-user mode: the Unix account a job owner's replicas run as (throws when it has none). */
  run_as?: (owner: string) => Promise<RunAs>;
}

/** Counters for /metrics. */
export interface ControllerStats {
  reports_total: number;
  rounds_total: number;
  round_seconds_sum: number;
  last_round_s: number;
}
