/** Options and counters of the Controller (controller.ts). */
import type { Backend, RunAs } from '../backends/backend.js';
import type { PortRange } from '../backends/contract-env.js';
import type { Policy } from '../policy/policy.js';
import type { PolicyThread } from './policy-thread/policy-thread.js';
import type { SharesConfig } from '../policy/shares/index.js';
import type { RankWatchOptions } from './ranks/rank-watch-options.js';
import type { Store, UserJobLimits } from '../store/store.js';
import { systemClock, type Clock } from '../util/clock.js';

/**
 * What the server (or a test) passes: the first stage of the controller's configuration; every
 * optional field has its default in CONTROLLER_DEFAULTS, applied once by resolveControllerOptions.
 */
export interface ControllerOptions {
  store: Store;
  backend: Backend;
  /** The policy, deciding in this thread or in a worker thread of its own (policy-thread/). */
  policy: Policy | PolicyThread;
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
  /** The clock only (timers stay the system's); `clock` wins when both are given. */
  now_ms?: () => number;
  /** Time and timers (util/clock.ts): a FakeClock runs the controller in test time. */
  clock?: Clock;
  /** Period of the launch/deadline pump (ms). Default 250. */
  tick_ms?: number;
  /** Thresholds of the live verdicts across ranks (ranks/rank-watch.ts); default: theirs. */
  rank_watch?: RankWatchOptions;
  /** Multi-user mode: the Unix account a job owner's replicas run as (throws when it has none). */
  run_as?: (owner: string) => Promise<RunAs>;
  /**
   * One profile per key for all users (`goodput up --shared-profiles`); default false: each
   * user's jobs start from and feed only that user's profile of their key (ProfileBook).
   */
  shared_profiles?: boolean;
  /**
   * Most jobs one user may have not ended and queued (`goodput up --max-active-jobs-per-user`,
   * `--max-queued-jobs-per-user`); a submit past either is refused with E_JOB_LIMIT (HTTP 429).
   * Default DEFAULT_USER_JOB_LIMITS; 0 for a field: no limit.
   */
  user_limits?: UserJobLimits;
  /**
   * The shares in force (`goodput up --shares FILE`: multiuser/shares-file.ts, re-read when the
   * file changes), asked once per round. Absent: every user is their own team of weight 1.
   */
  shares?: () => SharesConfig;
}

/**
 * Per-user limits unless told otherwise: far above a person's sweep, far below a flood that
 * would make every round read and rank tens of thousands of waiting jobs.
 */
export const DEFAULT_USER_JOB_LIMITS: UserJobLimits = { max_active: 2000, max_queued: 1000 };

/** Defaults of the optional numbers of ControllerOptions, in one place. */
export const CONTROLLER_DEFAULTS = {
  restart_backoff_s: 1,
  early_failure_s: 10,
  hung_timeout_s: 300,
  watch_interval_s: 2,
  refit_interval_s: 5,
  tick_ms: 250,
} as const;

/** The second stage: every option resolved (defaults applied, one clock for time and timers). */
export interface ControllerConfig extends Omit<
  ControllerOptions,
  keyof typeof CONTROLLER_DEFAULTS | 'log' | 'now_ms' | 'clock'
> {
  restart_backoff_s: number;
  early_failure_s: number;
  hung_timeout_s: number;
  watch_interval_s: number;
  refit_interval_s: number;
  tick_ms: number;
  log: (line: string) => void;
  clock: Clock;
  user_limits: UserJobLimits;
}

/** Applies CONTROLLER_DEFAULTS and picks the clock; the result is a new object (`options` is not changed). */
export function resolveControllerOptions(options: ControllerOptions): ControllerConfig {
  const { now_ms, clock, log, ...rest } = options;
  const d = CONTROLLER_DEFAULTS;
  return {
    ...rest,
    restart_backoff_s: options.restart_backoff_s ?? d.restart_backoff_s,
    early_failure_s: options.early_failure_s ?? d.early_failure_s,
    hung_timeout_s: options.hung_timeout_s ?? d.hung_timeout_s,
    watch_interval_s: options.watch_interval_s ?? d.watch_interval_s,
    refit_interval_s: options.refit_interval_s ?? d.refit_interval_s,
    tick_ms: options.tick_ms ?? d.tick_ms,
    log: log ?? (() => {}),
    user_limits: options.user_limits ?? DEFAULT_USER_JOB_LIMITS,
    clock: clock ?? (now_ms ? { ...systemClock, now_ms } : systemClock),
  };
}

/** Counters for /metrics. */
export interface ControllerStats {
  reports_total: number;
  rounds_total: number;
  round_seconds_sum: number;
  last_round_s: number;
  /**
   * Parts of the last round that had active jobs (bench:scale): inventory, store reads and the
   * snapshot; the policy's decide(); the store transitions that apply it, launches excluded.
   */
  last_snapshot_s: number;
  /** CPU seconds of this process over the last round (requests served meanwhile included). */
  last_round_cpu_s: number;
  last_decide_s: number;
  last_apply_s: number;
}
