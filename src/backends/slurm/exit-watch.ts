/**
 * What the Slurm backend's poll knows of the attempts it watches and reads from Slurm's job list
 * to tell how a job ended: by itself, by Goodput's stop, or from outside (an operator, Slurm).
 */
import { existsSync } from 'node:fs';
import { runFileBase } from '../run-files.js';
import { ACTIVE_JOB_STATES, type SlurmJob } from './inventory.js';

/** A Slurm job of an attempt this backend watches, with the ranks whose exit is still unreported. */
export interface Watched {
  job_id: string;
  attempt: number;
  job_dir: string;
  ranks: Set<number>;
  /** When the watch began: only a job list read after it can tell that the job ended. */
  since_ms: number;
  /** Strongest stop Goodput asked for. */
  stop?: 'SIGTERM' | 'SIGKILL';
  /** When the poll first saw the Slurm job ended (exit files may land just after). */
  ended_at_ms?: number;
  /**
   * Why the Slurm job ended from outside, once a poll saw it: kept for the ranks whose exits land
   * later, after Goodput's own stop of the rest of the attempt (then CANCELLED is all squeue says).
   */
  outside?: string;
  /** When a poll first found a rank killed by a signal Goodput did not send, the Slurm job still listed as running. */
  signalled_at_ms?: number;
  /** A job list read after the submission showed the job past PENDING (running or ended): `held` says no more. */
  left_pending?: boolean;
}

/** How long (ms) a rank's exit file gets to appear after its Slurm job ended. */
export const EXIT_FILE_WAIT_MS = 3000;

/**
 * How long (ms) the exits of an attempt are held, once a rank was killed by a signal Goodput did
 * not send (exit 137 or 143) while Slurm still lists the job as running, for the list to say why.
 * slurmctld signals the tasks of a job it ends (a node set down, an scancel) and a list read at
 * that moment can still show the old state; reported at once, such an end read as the program's
 * own checkpointed stop. A rank killed on its node by hand is reported after this wait.
 */
export const OUTSIDE_REASON_WAIT_MS = 5000;
/**
 * How long (ms) the hold above lasts at most while Slurm lists the job COMPLETING. An scancel'd
 * job is listed COMPLETING, with no reason, until its last task is dead: a rank slow to leave on
 * SIGTERM (a checkpoint under load) is killed only after KillWait (30 s by default), and the
 * list says CANCELLED only then. Reported before, the operator's cancel read as the program's own
 * checkpointed stop.
 */
export const COMPLETING_HOLD_MAX_MS = 120_000;

/** How long (ms) the signalled exits of a Slurm job listed as `entries` are held at most. */
export function outsideReasonWait_ms(entries: readonly SlurmJob[]): number {
  return entries.some((j) => j.state === 'COMPLETING') ? COMPLETING_HOLD_MAX_MS : OUTSIDE_REASON_WAIT_MS;
}
/** Exit codes of a rank killed by SIGKILL (137) or SIGTERM (143). */
export const SIGNAL_EXIT_CODES: ReadonlySet<number> = new Set([137, 143]);

/** Job ends that came from outside the job and outside Goodput (an operator, Slurm itself). */
export const OUTSIDE_END_STATES: ReadonlySet<string> = new Set([
  'CANCELLED',
  'NODE_FAIL',
  'TIMEOUT',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
  'OUT_OF_MEMORY',
]);

/**
 * How a Slurm job is ending when something outside the job and outside Goodput ends it (an
 * operator's `scancel`, a node down, a time limit ...); undefined for a job that runs or ends by
 * itself. After Goodput's own stop (`stopped`), CANCELLED is Goodput's doing, a node failure not.
 */
export function outsideEnd(id: string, job: SlurmJob | undefined, stopped: boolean): string | undefined {
  if (!job || (stopped && job.state === 'CANCELLED')) return undefined;
  const reason = ['None', '', 'NonZeroExitCode'].includes(job.reason) ? '' : job.reason;
  if (!OUTSIDE_END_STATES.has(job.state) && !(job.state === 'COMPLETING' && reason)) return undefined;
  return `Slurm job ${id} ended ${job.state}${reason ? ` (${reason})` : ''}, not requested by Goodput`;
}

/** Whether the job list shows Slurm job `id` (or the het job of that id) in an active state. */
export function isActive(jobs: readonly SlurmJob[], id: string): boolean {
  return jobs.some((j) => (String(j.job_id) === id || String(j.het_job_id) === id) && ACTIVE_JOB_STATES.has(j.state));
}

/** Whether the rank's program was started (the wrapper wrote its .pid file). */
export function started(job_dir: string, attempt: number, rank: number): boolean {
  return existsSync(runFileBase(job_dir, attempt, rank) + '.pid');
}
