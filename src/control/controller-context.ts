/**
 * What the parts of the controller share (controller.ts composes them: round.ts, launcher.ts,
 * supervisor.ts): the resolved configuration, its clock, the SIGKILL deadlines, the facts already
 * recorded as events, and the job directory layout.
 */
import { join } from 'node:path';
import type { ReplicaRef } from '../backends/backend.js';
import type { EventKind } from '../store/lifecycle.js';
import type { ReplicaRecord } from '../store/types.js';
import type { ControllerConfig } from './controller-options.js';
import { KillDeadlines } from './replicas/kill-deadlines.js';
import type { ReportIngest } from './reports/report-ingest.js';
import { Turns } from '../util/turns.js';

export class ControllerContext {
  /** SIGKILL deadlines of replicas that were sent SIGTERM (ended jobs, stale attempts). */
  readonly killAt = new KillDeadlines();
  /** Facts already recorded as events (node problems, an unavailable backend), to record each once. */
  private readonly noted = new Set<string>();

  constructor(
    readonly config: ControllerConfig,
    readonly reports: ReportIngest,
    /** Asks for a scheduling round soon (Controller.requestRound). */
    readonly requestRound: () => void,
  ) {}

  now(): number {
    return this.config.clock.now_ms();
  }

  /** Turns for a long loop of the controller, by its clock's budget (none on a FakeClock). */
  turns(): Turns {
    return new Turns(this.config.clock.turn_budget_ms ?? Infinity);
  }

  log(line: string): void {
    this.config.log(line);
  }

  /** Directory of a job's checkpoints, logs and run files. */
  jobDir(job_id: string): string {
    return join(this.config.data_dir, 'jobs', job_id);
  }

  ref(r: ReplicaRecord): ReplicaRef {
    return {
      job_id: r.job_id,
      attempt: r.attempt,
      rank: r.rank,
      node: r.node,
      launch_id: r.launch_id,
      pid: r.pid,
      proc_start: r.proc_start,
      job_dir: this.jobDir(r.job_id),
    };
  }

  async liveReplicas(job_id: string): Promise<ReplicaRecord[]> {
    return (await this.config.store.listReplicas(job_id)).filter((r) => r.exit_code === null);
  }

  /** Records an event for a fact about a job once per `key` (a node problem, an outage). */
  async noteOnce(job_id: string, key: string, kind: EventKind, reason: string): Promise<void> {
    if (this.noted.has(`${job_id}/${key}`)) return;
    this.noted.add(`${job_id}/${key}`);
    this.log(`job ${job_id}: ${reason}`);
    await this.config.store.recordEvent(job_id, kind, this.config.backend.name, reason, {});
  }

  /** Forgets a fact recorded by noteOnce (it ended: record it again if it comes back). */
  forget(job_id: string, key: string): void {
    this.noted.delete(`${job_id}/${key}`);
  }
}
