/**
 * The supervisor part of the controller: what happens after replicas exit (the lifecycle's
 * decision: stop, fail, finish, requeue, relaunch), kills of ended jobs, the periodic watch of
 * this server's replicas (exits missed, hung jobs) and reconciliation after a server restart.
 */
import { hungReason, isTerminal, settle } from '../../store/lifecycle.js';
import type { DeviceBinding, TransitionDetail } from '../../store/store.js';
import type { ReplicaRecord } from '../../store/types.js';
import { jobsInTurns, liveReplicasInTurns } from '../paged-reads.js';
import type { ControllerContext } from '../controller-context.js';
import { failureHint } from './failure-hint.js';
import { replicasByJob } from './kill-deadlines.js';
import { logTail } from './log-tail.js';

export class Supervisor {
  /** When this controller started watching replicas (hung detection counts from here at most). */
  private watchingSince_ms = 0;
  private lastWatch_ms = 0;
  /** Runs after every watch (the verdicts across ranks, control/ranks/rank-watch.ts). */
  afterWatch: ((live: readonly ReplicaRecord[], now_ms: number) => Promise<void>) | undefined;

  constructor(private readonly ctx: ControllerContext) {}

  /** Starts counting hung time from now (the controller starts watching). */
  startWatching(): void {
    this.watchingSince_ms = this.ctx.now();
  }

  /** Whether the watch interval has passed since the last watch. */
  watchDue(now_ms: number): boolean {
    return now_ms - this.lastWatch_ms >= this.ctx.config.watch_interval_s * 1000;
  }

  /** Does what the lifecycle decides for a running or rescaling job after its replicas' exits. */
  async settle(job_id: string): Promise<void> {
    const { store, backend } = this.ctx.config;
    const job = await store.getJob(job_id);
    if (!job || (job.state !== 'running' && job.state !== 'rescaling')) return;
    const replicas = await store.listReplicas(job_id, job.launches - 1);
    // A stop clears launched_at_ms; what the stopped attempt did is still counted from its start.
    const started_ms = replicas.length > 0 ? Math.min(...replicas.map((r) => r.started_at_ms)) : null;
    const evidence = { ...job, launched_at_ms: job.launched_at_ms ?? started_ms };
    const action = settle(
      {
        ...job,
        attempt: job.launches - 1,
        max_restarts: job.spec.max_restarts,
        has_target: job.allocation.length > 0,
        evidence,
      },
      replicas,
      {
        now_ms: this.ctx.now(),
        early_failure_s: this.ctx.config.early_failure_s,
        backoff_base_s: this.ctx.config.restart_backoff_s,
      },
    );
    const live = replicas.filter((r) => r.exit_code === null);
    if (action.do === 'fail' || action.do === 'finish')
      await this.ctx.reports.finalRefit(job, action.do === 'finish' && action.to === 'succeeded');
    const binding: DeviceBinding = { allocation: job.allocation, devices: job.devices };
    // The failed rank's last log lines, and what they say to do where failure-hint.ts knows.
    const failed = (rank: number, reason: string): { reason: string; data: TransitionDetail['data'] } => {
      const log_tail = logTail(replicas.find((r) => r.rank === rank)?.log_path);
      const hint = failureHint(log_tail);
      return { reason: hint === undefined ? reason : `${reason}; ${hint}`, data: { log_tail, log_rank: rank } };
    };
    switch (action.do) {
      case 'wait':
        return;
      case 'stop': {
        const why = action.failure ? failed(action.failure.rank, action.reason) : undefined;
        await store.stopJob(
          job_id,
          binding,
          action.kind,
          'controller',
          why?.reason ?? action.reason,
          action.failure && why ? { failure: action.failure, data: why.data } : {},
        );
        for (const r of live) backend.signal(this.ctx.ref(r), 'SIGTERM');
        return this.settle(job_id);
      }
      case 'fail': {
        const why = failed(action.failure.rank, action.reason);
        await store.finishJob(job_id, 'failed', 'controller', why.reason, { failure: action.failure, data: why.data });
        this.terminate(job_id, live);
        break;
      }
      case 'finish': {
        const why = action.to === 'failed' ? failed(job.last_failure?.rank ?? 0, action.reason) : undefined;
        await store.finishJob(
          job_id,
          action.to,
          'controller',
          why?.reason ?? action.reason,
          why ? { data: why.data } : {},
        );
        break;
      }
      case 'requeue':
        await store.requeueJob(job_id, 'controller', action.reason);
        break;
      case 'relaunch':
        await store.relaunchJob(job_id, action.not_before_ms, 'controller', action.reason);
        break;
    }
    this.ctx.requestRound();
  }

  /** SIGTERM to the live replicas of an ended job, SIGKILL after the grace period. */
  terminate(job_id: string, live: readonly ReplicaRecord[]): void {
    for (const r of live) this.ctx.config.backend.signal(this.ctx.ref(r), 'SIGTERM');
    if (live.length > 0) this.ctx.killAt.set(job_id, this.ctx.now() + this.ctx.config.grace_s * 1000);
  }

  /**
   * Every watch interval: records the exits of this server's replicas that ended unheard (the
   * devices are free once their processes are gone), then kills and restarts hung jobs.
   */
  async watch(live: readonly ReplicaRecord[], now: number): Promise<void> {
    const { store, backend } = this.ctx.config;
    this.lastWatch_ms = now;
    // 16,000 live replicas at 16,384 GPUs: the watch gives way so that reports are answered meanwhile.
    const turns = this.ctx.turns();
    for (const r of live) {
      await turns.pause();
      const status = backend.probe(this.ctx.ref(r));
      if (status === 'alive') continue;
      if (await store.recordReplicaExit({ ...r, exit_code: status }, 'reconciler')) await this.settle(r.job_id);
    }
    const liveOf = replicasByJob(live);
    for (const job of await jobsInTurns(store, ['running', 'rescaling'], turns)) {
      await turns.pause();
      // An exit recorded but not acted on (a settle that failed on a full disk) is acted on now,
      // every watch until it succeeds: no job stays placed with no process.
      if (!(liveOf.get(job.id) ?? []).some((r) => r.attempt === job.launches - 1)) await this.settle(job.id);
      const reason =
        job.state === 'running'
          ? hungReason(job, now, this.watchingSince_ms, this.ctx.config.hung_timeout_s, job)
          : undefined;
      if (reason === undefined) continue;
      await store.stopJob(job.id, { allocation: job.allocation, devices: job.devices }, 'hung', 'controller', reason);
      // SIGKILL: a stopped (SIGSTOP) or wedged replica would never act on SIGTERM.
      for (const r of liveOf.get(job.id) ?? []) backend.signal(this.ctx.ref(r), 'SIGKILL');
    }
    await this.afterWatch?.(live, now);
  }

  /** After a restart: adopt live replicas, record the exits that happened while down, settle. */
  async reconcile(): Promise<void> {
    const { store, backend } = this.ctx.config;
    const adopted: string[] = [];
    const turns = this.ctx.turns();
    for (const r of await liveReplicasInTurns(store, turns)) {
      await turns.pause();
      const job = await store.getJob(r.job_id);
      const status = await backend.adopt(this.ctx.ref(r));
      if (status !== 'alive') {
        await store.recordReplicaExit({ ...r, exit_code: status }, 'reconciler');
        continue;
      }
      adopted.push(`${r.job_id}/${r.rank}`);
      if (!job || isTerminal(job.state) || r.attempt !== job.launches - 1) {
        backend.signal(this.ctx.ref(r), 'SIGTERM');
        this.ctx.killAt.set(r.job_id, this.ctx.now() + this.ctx.config.grace_s * 1000);
      }
    }
    if (adopted.length > 0)
      this.ctx.log(
        `reconcile: re-adopted ${adopted.length} running replica(s): ${adopted.slice(0, 50).join(' ')}` +
          // One line of 16,000 names helps no one reading the log (bench:scale).
          (adopted.length > 50 ? ` and ${adopted.length - 50} more` : ''),
      );
    for (const job of await store.listJobs({ states: ['starting'] }))
      await backend.abandon(job.id, this.ctx.jobDir(job.id), job.launches);
    for (const job of await store.listJobs({ states: ['running', 'rescaling'] })) await this.settle(job.id);
  }
}
