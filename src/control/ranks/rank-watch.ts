/**
 * The live verdicts across a job's ranks, acted on (docs/doctor.md, "Live verdicts across
 * ranks"): every watch, per running job whose ranks report (rank-book.ts), the straggler verdict
 * (an event once per attempt and rank; the device counted towards `slow`) and the hang verdict.
 * A hung rank: every live replica of the attempt is asked for its Python stacks (SIGUSR1 through
 * the backend); `stacks_wait_s` later the stacks, the hung process's /proc facts and its last log
 * line go into a `rank-hung` event, its device is drained and the job is stopped as hung (SIGKILL)
 * and restarted from its checkpoint on the devices left, instead of waiting out the job-level
 * hung timeout.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hangVerdict, type HangVerdict } from '../../doctor/ranks/hang.js';
import type { RankState } from '../../doctor/ranks/rank-state.js';
import { stragglerVerdict, type StragglerVerdict } from '../../doctor/ranks/straggler.js';
import type { ReplicaRecord } from '../../store/types.js';
import type { ControllerContext } from '../controller-context.js';
import { logTail } from '../replicas/log-tail.js';
import type { DeviceHealth } from './device-health.js';
import type { RankBook } from './rank-book.js';
import type { RankWatchOptions } from './rank-watch-options.js';

export type { RankWatchOptions } from './rank-watch-options.js';

/** The verdicts of a job now, for `goodput show` and the API. */
export interface RankVerdicts {
  readonly attempt: number;
  readonly ranks: readonly RankState[];
  readonly straggler: StragglerVerdict | null;
  readonly hang: HangVerdict | null;
}

/** Bytes of each rank's stack dump kept in the event. */
const STACK_BYTES = 6000;

export class RankWatch {
  private readonly pending = new Map<string, { attempt: number; asked_ms: number }>();
  private readonly latest = new Map<string, RankVerdicts>();

  constructor(
    private readonly ctx: ControllerContext,
    readonly book: RankBook,
    readonly health: DeviceHealth,
    private readonly options: RankWatchOptions = {},
  ) {}

  /** The verdicts of the last watch for a job, if its ranks report. */
  verdicts(job_id: string): RankVerdicts | undefined {
    return this.latest.get(job_id);
  }

  /** One watch over the jobs with summaries (`live`: this server's live replicas). */
  async check(live: readonly ReplicaRecord[], now_ms: number): Promise<void> {
    const { store } = this.ctx.config;
    for (const job_id of this.book.jobIds()) {
      const job = await store.getJob(job_id);
      const attempt = this.book.attempt(job_id)!;
      if (!job || job.state !== 'running' || job.launches - 1 !== attempt) {
        if (!job || (job.state !== 'running' && job.state !== 'starting' && job.state !== 'rescaling'))
          this.book.forget(job_id);
        this.latest.delete(job_id);
        this.pending.delete(job_id);
        continue;
      }
      const replicas = live.filter((r) => r.job_id === job_id && r.attempt === attempt);
      const where = (rank: number) => {
        const r = replicas.find((x) => x.rank === rank);
        return { node: r?.node ?? '', device: r?.device ?? null };
      };
      const ranks = this.book.ranks(job_id, attempt, where);
      // Every rank must be heard before ranks are compared (a missing rank would look healthy).
      const complete = ranks.length === job.allocation.length;
      const straggler = complete ? stragglerVerdict(ranks, now_ms, this.options.straggler) : null;
      const hang = complete ? hangVerdict(ranks, now_ms, this.options.hang) : null;
      this.latest.set(job_id, { attempt, ranks, straggler, hang });
      if (straggler) await this.onStraggler(job_id, attempt, straggler, now_ms);
      if (!hang) {
        this.pending.delete(job_id);
        continue;
      }
      const asked = this.pending.get(job_id);
      if (!asked || asked.attempt !== attempt) {
        this.pending.set(job_id, { attempt, asked_ms: now_ms });
        for (const r of replicas) this.ctx.config.backend.requestStacks?.(this.ctx.ref(r));
        this.ctx.log(`job ${job_id}: ${hang.line}; asking every rank for its stacks`);
        continue;
      }
      if (now_ms - asked.asked_ms < (this.options.stacks_wait_s ?? 2) * 1000) continue;
      this.pending.delete(job_id);
      await this.onHang(job_id, attempt, hang, replicas, now_ms);
    }
  }

  private async onStraggler(job_id: string, attempt: number, v: StragglerVerdict, now_ms: number): Promise<void> {
    await this.ctx.noteOnce(job_id, `straggler/${attempt}/${v.rank}`, 'straggler', v.line);
    if (v.device === null) return;
    const mark = this.health.straggled(v.node, v.device, `${job_id}#${attempt}`, now_ms);
    if (mark)
      await this.ctx.noteOnce(
        job_id,
        `mark/${v.node}/${v.device}/slow`,
        'device-marked',
        `device ${v.device} of node ${v.node} marked slow: ${mark.reason}; placement takes it last, ` +
          `and its node after equal unmarked ones ('goodput nodes clear ${v.node}/${v.device}' to clear)`,
      );
  }

  private async onHang(
    job_id: string,
    attempt: number,
    v: HangVerdict,
    replicas: readonly ReplicaRecord[],
    now_ms: number,
  ): Promise<void> {
    const { store, backend } = this.ctx.config;
    const job = await store.getJob(job_id);
    if (!job || job.state !== 'running' || job.launches - 1 !== attempt) return;
    const stacks: Record<string, string> = {};
    for (const r of replicas) {
      const path = join(this.ctx.jobDir(job_id), 'checkpoint', `stacks-attempt-${attempt}-rank-${r.rank}.txt`);
      if (existsSync(path)) stacks[String(r.rank)] = readFileSync(path, 'utf8').slice(-STACK_BYTES);
    }
    const culprit = replicas.find((r) => r.rank === v.rank);
    const facts = culprit ? backend.processFacts?.(this.ctx.ref(culprit)) : undefined;
    const last_line = logTail(culprit?.log_path, 1, 1024).trim();
    const proc = facts ? `; its process: state ${facts.state}, ${facts.cpu_s.toFixed(1)} CPU-s` : '';
    const stacksNote = stacks[String(v.rank)] ? '' : '; it wrote no stacks (stopped or not answering)';
    const who = `${job_id}#${attempt}`;
    const drained = v.device !== null ? this.health.hung(v.node, v.device, who, now_ms) : undefined;
    // Where the cluster picks the GPUs within a node (Slurm), only the whole node keeps the hung one out.
    const wholeNode = drained !== undefined && backend.hangDrains === 'node';
    if (wholeNode)
      for (const d of backend.nodes().find((n) => n.name === v.node)?.devices ?? [])
        if (d.index !== v.device) this.health.hung(v.node, d.index, who, now_ms);
    const without = !drained
      ? ''
      : wholeNode
        ? ` without node ${v.node} (drained: the cluster picks the devices within a node)`
        : ` without device ${v.device} of node ${v.node} (drained)`;
    const reason = `${v.line}${proc}${stacksNote}; killing its replicas and restarting from the checkpoint${without}`;
    await store.recordEvent(job_id, 'rank-hung', 'controller', reason, {
      rank: v.rank,
      node: v.node,
      device: v.device,
      evidence: v.evidence,
      stalled_s: v.stalled_s,
      peers: v.peers,
      stacks,
      process: facts ?? null,
      last_log_line: last_line,
    });
    if (drained)
      await store.recordEvent(
        job_id,
        'device-marked',
        'controller',
        wholeNode
          ? `node ${v.node} drained (every device: the cluster, not Goodput, picks the devices within a ` +
              `node): ${drained.reason} ('goodput nodes clear ${v.node}' to clear)`
          : `device ${v.device} of node ${v.node} drained: ${drained.reason} ` +
              `('goodput nodes clear ${v.node}/${v.device}' to clear)`,
        { node: v.node, device: wholeNode ? null : v.device, kind: 'drained' },
      );
    // A drained node: no target, so the job is requeued and placed afresh once its replicas are
    // gone (a policy that keeps a job's allocation, fifo, would put it back on that node).
    const next = wholeNode ? { allocation: [], devices: [] } : { allocation: job.allocation, devices: job.devices };
    await store.stopJob(job_id, next, 'hung', 'controller', reason);
    // SIGKILL: a stopped (SIGSTOP) or wedged replica would never act on SIGTERM.
    for (const r of replicas) backend.signal(this.ctx.ref(r), 'SIGKILL');
    this.latest.delete(job_id);
    this.ctx.requestRound();
  }
}
