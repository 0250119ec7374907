/**
 * A replica's process facts and Python stacks on Slurm, where the server may run on another
 * machine than the rank and cannot read its node's /proc or signal its pid. The Slurm-native way
 * in: `scancel --signal=23 JOBID` (SIGURG): slurmctld hands the signal to the slurmstepd of every
 * node of the job, which delivers it to every process of the step's tasks, wherever they run and
 * whichever account runs them; every process ignores it by default, and the task wrapper alone
 * acts on it (batch-script.ts ASK_FACTS): it copies its program's /proc/PID/stat to the shared run
 * directory, and forwards SIGUSR1 (the SDK's faulthandler dump) only to ranks the server marked.
 * Why not the alternatives: `srun --overlap --jobid` starts a new step per question (a second or
 * more of slurmctld and slurmd work, and a step that a stopped rank's node may never finish),
 * and a plain `scancel --signal=USR1` reaches every process of the step (DataLoader workers,
 * the wrapper, a plain job's program), for which SIGUSR1's default action is to end.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { ProcessFacts, ReplicaRef } from '../backend.js';
import { procFactsOf } from '../local/process-info.js';
import { runFileBase } from '../run-files.js';
import { ASK_SIGNAL } from './batch-script.js';

/** How long `refreshFacts` waits for the wrappers' answers (ms). */
const ANSWER_WAIT_MS = 3000;
/** Facts asked this recently (ms) are not asked again by `facts`. */
const FRESH_MS = 5000;
/** An answer older than this (ms) is not read: it predates the last ask. */
const STALE_MS = 10_000;

/** Asks the ranks of Slurm jobs for their facts, stacks or end: one scancel per Slurm job per ask. */
export class FactsAsk {
  private readonly asked = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();

  /** `scancel` runs scancel with these arguments and logs its failures itself. */
  constructor(private readonly scancel: (args: readonly string[]) => Promise<unknown>) {}

  /**
   * Marks the rank for a stack dump (`.stacks`) and signals its Slurm job once the caller's loop
   * over the attempt's ranks has marked them all; false when it cannot be asked (no Slurm job, no
   * run directory).
   */
  stacks(ref: ReplicaRef): boolean {
    if (!this.mark(ref, '.stacks')) return false;
    void this.coalesced(ref.launch_id);
    return true;
  }

  /**
   * Marks the rank to be killed by its wrapper (`.kill`: SIGKILL to the program at once, then the
   * wrapper records the exit as always) and signals its Slurm job; resolves once that signal was
   * sent. Faster than Slurm's own kill, which sends SIGTERM and waits KillWait (30 s by default)
   * before its SIGKILL, and leaves no exit file; a job cancel after it is the backstop.
   */
  kill(ref: ReplicaRef): Promise<void> {
    return this.mark(ref, '.kill') ? this.coalesced(ref.launch_id) : Promise.resolve();
  }

  /** Creates the marker (never through a link: run/ may be the job owner's); false when it cannot. */
  private mark(ref: ReplicaRef, suffix: string): boolean {
    if (ref.launch_id === '') return false;
    try {
      closeSync(openSync(runFileBase(ref.job_dir, ref.attempt, ref.rank) + suffix, 'wx', 0o600));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false; // EEXIST: already asked
    }
    return true;
  }

  /** One signal for the ranks marked in the same synchronous loop (sent from a microtask after it). */
  private coalesced(launch_id: string): Promise<void> {
    let p = this.inFlight.get(launch_id);
    if (!p) {
      p = new Promise<void>((resolve) => queueMicrotask(resolve))
        .then(() => this.signal(launch_id, true))
        .finally(() => this.inFlight.delete(launch_id));
      this.inFlight.set(launch_id, p);
    }
    return p;
  }

  /**
   * Asks every rank of `refs` for its facts and waits (at most 3 s) until each answered. Ranks of
   * a Slurm job asked in the last 5 s are not asked again (a dashboard or a script polling
   * GET /v1/jobs/{id}/ranks would otherwise cost slurmctld one RPC per poll): they keep that answer.
   */
  async facts(refs: readonly ReplicaRef[]): Promise<void> {
    const recent = (id: string) => Date.now() - (this.asked.get(id) ?? -Infinity) < FRESH_MS;
    const live = refs.filter((r) => r.launch_id !== '' && !recent(r.launch_id));
    const before = live.map((r) => factsStamp(r));
    await Promise.all([...new Set(live.map((r) => r.launch_id))].map((id) => this.signal(id, true)));
    for (let waited = 0; waited < ANSWER_WAIT_MS; waited += 100) {
      if (live.every((r, i) => factsStamp(r) !== before[i])) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async signal(launch_id: string, always = false): Promise<void> {
    const last = this.asked.get(launch_id);
    if (!always && last !== undefined && Date.now() - last < 1000) return; // the other ranks of one ask
    this.asked.set(launch_id, Date.now());
    if (this.asked.size > 1000) this.asked.delete(this.asked.keys().next().value!);
    await this.scancel([`--signal=${ASK_SIGNAL}`, launch_id]);
  }
}

function factsPath(ref: ReplicaRef): string {
  return runFileBase(ref.job_dir, ref.attempt, ref.rank) + '.facts';
}

/** When the facts file last changed ('' when there is none): tells a new answer from an old one without comparing clocks. */
function factsStamp(ref: ReplicaRef): string {
  try {
    const s = statSync(factsPath(ref));
    return `${s.mtimeMs}/${s.ino}`;
  } catch {
    return '';
  }
}

/**
 * The facts the rank's wrapper copied at the last ask, or undefined (never asked, no answer, or an
 * answer older than 10 s).
 * Read as the exit file is (run-files.ts): a plain file only, never through a link, a few KB.
 */
export function readFacts(ref: ReplicaRef): ProcessFacts | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(factsPath(ref), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    // An answer older than the last ask would show the process as it was then (a rank stopped
    // since still reading `S`): unknown is better than wrong. Node clocks are taken to agree within seconds.
    if (!stat.isFile() || Date.now() - stat.mtimeMs > STALE_MS) return undefined;
    const buffer = Buffer.alloc(4096);
    return procFactsOf(buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0)));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
