/**
 * The job state machine as data, in one pure module (no I/O, no clock): the states, which named
 * store operation moves a job from which states to which, the event kinds they record, what the
 * exit codes of replicas mean, and the decisions that follow from them (settle after exits,
 * failure classification, restart backoff, hung detection). The store checks its transitions
 * against `TRANSITIONS`; the controller executes what `settle` and `hungReason` decide.
 * It lives beside the store (not in control/) because the store, a lower layer, enforces it.
 */
import type { RankEventKind } from './rank-events.js';

/**
 * Lifecycle of a job: `queued -> starting -> running <-> rescaling -> succeeded | failed |
 * cancelled`, plus `preempted` (ran before, now waiting for devices).
 * - `starting`: devices assigned, replicas not yet launched (waiting for the devices to be
 *   released by other jobs' processes, or for a restart backoff);
 * - `running`: replicas of the current attempt launched;
 * - `rescaling`: every replica was sent SIGTERM (SIGKILL for a hung one); relaunched on the target
 *   placement (or preempted when the target is empty) once all have exited.
 */
export type JobState =
  'queued' | 'starting' | 'running' | 'rescaling' | 'preempted' | 'succeeded' | 'failed' | 'cancelled';

/** States a job never leaves. */
export const TERMINAL_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];
/** States in which the scheduler considers a job. */
export const ACTIVE_STATES: readonly JobState[] = ['queued', 'starting', 'running', 'rescaling', 'preempted'];
/** States in which a job's placement is in force or about to be (its devices are reserved). */
export const PLACED_STATES: readonly JobState[] = ['starting', 'running', 'rescaling'];

/** Whether `state` is terminal. */
export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** Exit code of a replica that finished training. */
export const EXIT_OK = 0;
/** Exit code of a replica that checkpointed after SIGTERM and asks to be relaunched (docs/contract.md). */
export const EXIT_CHECKPOINTED = 143;
/** Exit code of a replica that vanished without a recorded status, or was SIGKILLed (128 + 9). */
export const EXIT_LOST = 137;

/** Whether an exit code is a failure (neither finished nor checkpointed). */
export function isFailureExit(code: number): boolean {
  return code !== EXIT_OK && code !== EXIT_CHECKPOINTED;
}

/** What well-known exit codes mean, for failure reasons (a shell's 126/127, 128 + signal). */
const EXIT_MEANINGS: Readonly<Record<number, string>> = {
  126: 'the command is not executable',
  127:
    'command not found: the program, or the interpreter on its #! line, is neither in the ' +
    'workdir nor on the PATH the replica sees; its log says which',
  134: 'aborted by SIGABRT',
  137: 'killed by SIGKILL: the kernel out-of-memory killer, an operator, or a lost process',
  139: 'segmentation fault, SIGSEGV',
};

/** `replica R failed with exit code C`, with what the code means when it is well known. */
export function replicaFailure(rank: number, exit_code: number): string {
  const meaning = EXIT_MEANINGS[exit_code];
  return `replica ${rank} failed with exit code ${exit_code}${meaning ? ` (${meaning})` : ''}`;
}

/** Why the replicas of a `rescaling` job were stopped. */
export type StopKind = 'rescale' | 'failure' | 'hung';

/** Every kind of event the store records. */
export type EventKind =
  | 'submitted'
  | 'assigned'
  | 'retargeted'
  | 'launched'
  | 'rescale'
  | 'failed-replica'
  | 'hung'
  | 'relaunch'
  | 'requeued'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  | 'replica-exited'
  // Facts that change no state (Store.recordEvent).
  | 'batch-size'
  | 'node-unavailable'
  | 'backend-unavailable'
  | 'waiting'
  // How the job uses its profile key's profile (Store.setProfileUse; profile-replaced: recordEvent).
  | 'profile-used'
  | 'profile-discarded'
  | 'profile-replaced'
  // A replica's log writer cut its log at the cap (datadir/log-drops.ts; recordEvent).
  | 'log-dropped'
  | RankEventKind;

/** The named store operations that change a job's state (or target). */
export type Operation = 'assign' | 'retarget' | 'launch' | 'stop' | 'relaunch' | 'requeue' | 'finish';

/** Source and target states of each operation; `to` lists every state it may produce. */
export const TRANSITIONS: Readonly<Record<Operation, { from: readonly JobState[]; to: readonly JobState[] }>> = {
  assign: { from: ['queued', 'preempted'], to: ['starting'] },
  retarget: { from: ['starting', 'rescaling'], to: ['starting', 'rescaling'] },
  launch: { from: ['starting'], to: ['running'] },
  stop: { from: ['running'], to: ['rescaling'] },
  relaunch: { from: ['rescaling'], to: ['starting'] },
  requeue: { from: ['starting', 'rescaling'], to: ['queued', 'preempted'] },
  finish: { from: ACTIVE_STATES, to: TERMINAL_STATES },
};

/** The event kind each kind of stop records. */
export const STOP_EVENT: Readonly<Record<StopKind, EventKind>> = {
  rescale: 'rescale',
  failure: 'failed-replica',
  hung: 'hung',
};

/** Why `op` may not run on a job in `state`, or undefined when it may. */
export function refusal(op: Operation, state: JobState): string | undefined {
  const { from } = TRANSITIONS[op];
  if (from.includes(state)) return undefined;
  return isTerminal(state) ? 'it already finished' : `expected ${from.join(' or ')}`;
}

/** Restart delay after the `failures`-th failure: base * 2^(failures - 1), at most 60 s. */
export function restartBackoff_s(failures: number, base_s: number): number {
  return Math.min(60, base_s * 2 ** Math.max(0, failures - 1));
}

/** The most recent failure of a job, kept to recognise a failure that repeats. */
export interface FailureRecord {
  attempt: number;
  rank: number;
  exit_code: number;
  /** The attempt failed within `early_failure_s` of its launch. */
  early: boolean;
}

/**
 * What a job proved about keeping its work across a stop (a structural subset of the stored
 * job): an SDK promise to checkpoint when stopped, an SDK checkpoint report, or a spec that
 * declares the script resumes from its own snapshot. An exit 143 proves nothing by itself.
 */
export interface StopEvidence {
  checkpoint_on_stop: boolean;
  checkpoint_at_ms: number | null;
  launched_at_ms: number | null;
  stop_requested_at_ms?: number | null;
  spec: { resumable?: boolean | undefined };
}

/** Whether a stop keeps the job's work (SDK checkpoint on stop, or a declared resumable script). */
export function keepsWork(e: StopEvidence): boolean {
  return e.checkpoint_on_stop || e.spec.resumable === true;
}

/** `12 min`, `40 s`, `2.5 h`: a duration in words. */
function span(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/**
 * What a stop did to the job's work, in words for its events: "checkpointed" only with proof;
 * otherwise that it was stopped and what it loses (the work since its last reported checkpoint,
 * or since its launch when it has none).
 */
export function stopOutcome(e: StopEvidence, now_ms: number): string {
  if (e.checkpoint_on_stop) return 'checkpointed';
  if (e.spec.resumable === true) return 'stopped; it resumes from its own snapshot (declared resumable)';
  const at = e.stop_requested_at_ms ?? now_ms;
  const work = span(at - Math.max(e.launched_at_ms ?? at, e.checkpoint_at_ms ?? 0));
  if (e.checkpoint_at_ms !== null) return `stopped; it loses the ${work} of work since its last checkpoint`;
  return `stopped after ${work} of work; it has no checkpoint the control plane knows of, so it restarts from its beginning`;
}

/** How the job continues after a stop, in words ("resumes from its checkpoint" only with proof). */
export function resumeWords(e: StopEvidence): string {
  if (e.checkpoint_on_stop) return 'resumes from its checkpoint';
  if (e.spec.resumable === true) return 'resumes from its own snapshot';
  if (e.checkpoint_at_ms !== null) return 'resumes from its last checkpoint';
  return 'restarts from its beginning (no checkpoint the control plane knows of)';
}

/**
 * What a restart after a failure or a hang resumes from, in words for its events: a failure is
 * no stop, so a promise to checkpoint on SIGTERM saves nothing; only a checkpoint the job
 * reported (and how old it is), or a script declared resumable, keeps work. Without either the
 * job restarts from its beginning. `undefined` evidence (callers that know nothing) stays vague.
 */
export function restartFrom(e: StopEvidence | undefined, now_ms: number): string {
  if (e === undefined) return 'restarting from its last checkpoint, if it has one';
  if (e.checkpoint_at_ms !== null)
    return `restarting from its last checkpoint (made ${span(now_ms - e.checkpoint_at_ms)} ago; the work since is redone)`;
  if (e.spec.resumable === true)
    return 'restarting; it resumes from its own snapshot, if it wrote one (declared resumable)';
  const why = e.checkpoint_on_stop ? 'no checkpoint reported yet' : 'no checkpoint';
  return `restarting from its beginning (${why})`;
}

/** What `settle` needs to know about the job (a structural subset of the stored job). */
export interface SettleJob {
  state: JobState;
  /** Attempt number of the replicas being settled (launches - 1). */
  attempt: number;
  failures: number;
  max_restarts: number;
  stop_kind: StopKind | null;
  last_failure: FailureRecord | null;
  /** Whether the job has a target placement to relaunch on. */
  has_target: boolean;
  launched_at_ms: number | null;
  /** What the job proved about keeping its work; absent: a checkpoint on stop (the SDK's promise). */
  evidence?: StopEvidence;
}

/** Tunables of `settle`. */
export interface SettleOptions {
  now_ms: number;
  /** A failure within this many seconds of the launch counts as early. */
  early_failure_s: number;
  /** Base of the restart backoff. */
  backoff_base_s: number;
}

/** What the controller does after the exits of a job's current replicas were recorded. */
export type SettleAction =
  | { do: 'wait' }
  /** running -> rescaling; the live replicas get SIGTERM. */
  | { do: 'stop'; kind: 'rescale' | 'failure'; reason: string; failure?: FailureRecord }
  /** A deterministic failure: `failed` now (live replicas get SIGTERM), no blind retry. */
  | { do: 'fail'; reason: string; failure: FailureRecord }
  | { do: 'finish'; to: 'succeeded' | 'failed'; reason: string }
  | { do: 'requeue'; reason: string }
  | { do: 'relaunch'; not_before_ms: number; reason: string };

/**
 * Decides what a running or rescaling job does next from the exit codes of its current replicas
 * (null = still alive). Pure.
 * - running: a failure stops the job (or fails it at once when it repeats the previous attempt's
 *   exit code, or is early after an early failure); an unrequested 143 relaunches; all exited 0
 *   succeeds.
 * - rescaling, once every replica exited: succeeded when one exited 0 and the rest 0 or 143;
 *   failed past `max_restarts`; else requeued (no target) or relaunched (after a backoff when
 *   the stop was a failure or a hang).
 */
export function settle(
  job: SettleJob,
  exits: readonly { rank: number; exit_code: number | null }[],
  o: SettleOptions,
): SettleAction {
  const live = exits.filter((r) => r.exit_code === null);
  const exited = exits.filter((r): r is { rank: number; exit_code: number } => r.exit_code !== null);
  if (job.state === 'running') {
    const bad = exited.find((r) => isFailureExit(r.exit_code));
    if (bad) return classify(job, bad, o);
    const checkpointed = exited.find((r) => r.exit_code === EXIT_CHECKPOINTED);
    if (checkpointed && (!job.evidence || keepsWork(job.evidence)))
      return {
        do: 'stop',
        kind: 'rescale',
        reason: `replica ${checkpointed.rank} checkpointed (exit 143) without a rescale request; relaunching`,
      };
    if (checkpointed)
      return {
        do: 'stop',
        kind: 'rescale',
        reason:
          `replica ${checkpointed.rank} exited 143 (terminated) without a rescale request; ` +
          `relaunching (exit 143 alone is no checkpoint the control plane knows of)`,
      };
    if (live.length === 0 && exited.length > 0)
      return { do: 'finish', to: 'succeeded', reason: 'every replica exited 0' };
    return { do: 'wait' };
  }
  if (job.state !== 'rescaling' || live.length > 0) return { do: 'wait' };
  if (exited.some((r) => r.exit_code === EXIT_OK) && exited.every((r) => !isFailureExit(r.exit_code))) {
    return { do: 'finish', to: 'succeeded', reason: finishedDuringStop(exited) };
  }
  const failed =
    job.stop_kind === 'hung' || (job.stop_kind === 'failure' && exited.some((r) => isFailureExit(r.exit_code)));
  if (failed && job.failures > job.max_restarts) {
    const last =
      job.stop_kind === 'hung'
        ? 'it hung'
        : job.last_failure
          ? replicaFailure(job.last_failure.rank, job.last_failure.exit_code)
          : undefined;
    return {
      do: 'finish',
      to: 'failed',
      reason: `${job.failures} failures, more than max_restarts (${job.max_restarts})${last ? `; last: ${last}` : ''}`,
    };
  }
  const outcome = job.evidence ? stopOutcome(job.evidence, o.now_ms) : 'checkpointed';
  if (!job.has_target) return { do: 'requeue', reason: `${outcome}; waiting for devices` };
  if (!failed)
    return { do: 'relaunch', not_before_ms: o.now_ms, reason: `${outcome}; relaunching on the new placement` };
  const backoff_s = restartBackoff_s(job.failures, o.backoff_base_s);
  return {
    do: 'relaunch',
    not_before_ms: o.now_ms + backoff_s * 1000,
    reason: `restart ${job.failures}/${job.max_restarts} after ${backoff_s}s backoff`,
  };
}

/**
 * Why a job that was being stopped succeeded instead: its training ended before the stop took
 * effect. A replica that exited 0 had nothing left to checkpoint, so this is no checkpoint and
 * nothing is lost; one that exited 143 was stopped at its end.
 */
function finishedDuringStop(exited: readonly { rank: number; exit_code: number }[]): string {
  const stopped = exited.filter((r) => r.exit_code === EXIT_CHECKPOINTED).map((r) => r.rank);
  if (stopped.length === 0)
    return 'training finished before the stop took effect (every replica exited 0); nothing to checkpoint, nothing lost';
  const who = `replica${stopped.length > 1 ? 's' : ''} ${stopped.join(', ')}`;
  return `training finished before the stop took effect (${who} exited 143 (stopped at its end), the others 0); nothing lost`;
}

/** A failed replica of a running job: stop and restart, or fail now when it is deterministic. */
function classify(job: SettleJob, bad: { rank: number; exit_code: number }, o: SettleOptions): SettleAction {
  const ran_s = job.launched_at_ms === null ? Infinity : (o.now_ms - job.launched_at_ms) / 1000;
  const failure: FailureRecord = {
    attempt: job.attempt,
    rank: bad.rank,
    exit_code: bad.exit_code,
    early: ran_s < o.early_failure_s,
  };
  const what = replicaFailure(bad.rank, bad.exit_code);
  // A SIGKILL (137: the OOM killer, an operator, a vanished process) comes from outside the
  // program: repeating it says nothing about the program, so it is never judged deterministic.
  const external = bad.exit_code === EXIT_LOST;
  const previous =
    !external && job.last_failure !== null && job.last_failure.attempt === job.attempt - 1
      ? job.last_failure
      : undefined;
  if (previous && previous.exit_code === bad.exit_code) {
    return {
      do: 'fail',
      failure,
      reason: `${what} again (attempt ${job.attempt - 1} failed the same way); not retried`,
    };
  }
  if (previous?.early && failure.early) {
    return {
      do: 'fail',
      failure,
      reason: `${what} within ${o.early_failure_s}s of its start, as attempt ${job.attempt - 1} did; not retried`,
    };
  }
  const when = failure.early ? ` within ${o.early_failure_s}s of its start` : '';
  return { do: 'stop', kind: 'failure', failure, reason: `${what}${when}; ${restartFrom(job.evidence, o.now_ms)}` };
}

/** What hung detection needs to know about a job. */
export interface HungJob {
  state: JobState;
  last_report_at_ms: number | null;
  launched_at_ms: number | null;
  /** Step time of the newest report (s), to scale the timeout for slow steps. */
  last_step_time_s: number | null;
}

/** How many step times a job may go without reporting, when that exceeds the timeout. */
export const HUNG_STEP_FACTOR = 10;

/**
 * Why a running job counts as hung, or undefined. Only jobs that have reported (they use the
 * SDK) are judged; plain jobs never report. A job is hung when nothing arrived for
 * max(`timeout_s`, 10 step times) since its newest report, its launch, or `since_ms` (when this
 * server started watching), whichever is latest. `evidence` says what the restart resumes from.
 */
export function hungReason(
  job: HungJob,
  now_ms: number,
  since_ms: number,
  timeout_s: number,
  evidence?: StopEvidence,
): string | undefined {
  if (job.state !== 'running' || job.last_report_at_ms === null) return undefined;
  const limit_s = Math.max(timeout_s, HUNG_STEP_FACTOR * (job.last_step_time_s ?? 0));
  const last_ms = Math.max(job.last_report_at_ms, job.launched_at_ms ?? 0, since_ms);
  const silent_s = (now_ms - last_ms) / 1000;
  if (silent_s <= limit_s) return undefined;
  const limit = `limit ${Number(limit_s.toFixed(1))}s`;
  return `hung: no report for ${silent_s.toFixed(0)}s (${limit}); killing its replicas and ${restartFrom(evidence, now_ms)}`;
}

/**
 * Device-seconds of service of the allocation in force since its launch (0 before a launch):
 * what a job's stored `attained_service_gpu_s` lacks until its replicas stop.
 */
export function serviceSince(
  job: { launched_at_ms: number | null; allocation: readonly number[] },
  now_ms: number,
): number {
  if (job.launched_at_ms === null) return 0;
  return (job.allocation.length * Math.max(0, now_ms - job.launched_at_ms)) / 1000;
}
