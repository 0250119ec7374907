/**
 * The scheduling round of the controller: inventory, active jobs, the policy's decision on their
 * snapshot (control/loop/snapshot.ts, model/policy-job.ts), and the store transitions that apply it
 * (assign, requeue, retarget, checkpoint-restart rescale).
 */
import { gpuTypeOf as nodeType, type JobTypes, type NodeInfo, type ShareUsage } from '../../core/cluster.js';
import { advanceUsage, NO_SHARES, teamOf, type SharesConfig } from '../../policy/shares/index.js';
import type { GainClaim, Rejection } from '../../policy/policy.js';
import { ACTIVE_STATES, keepsWork, stopOutcome } from '../../store/lifecycle.js';
import type { DeviceBinding } from '../../store/store.js';
import type { JobRecord, StoredKeyProfile } from '../../store/types.js';
import type { ControllerContext } from '../controller-context.js';
import type { ControllerStats } from '../controller-options.js';
import { assignDevices, sameAllocation } from './device-binding.js';
import { gangWaits } from './gang.js';
import { keepRunning } from './drain-keep.js';
import { deviceUnit, resizeReason } from './insight.js';
import { nodeProblems } from './node-problems.js';
import type { ProfileBook } from '../reports/profile-book.js';
import { buildSnapshot, holdsDevices, type LastResize } from './snapshot.js';
import { avoidMarkedNodes } from './mark-preference.js';
import {
  isMixed,
  toGroups,
  toMachines,
  typedInventory,
  type MarkedDevice,
  type TypedInventory,
} from './typed-nodes.js';
import { jobTypes, typedInputs } from './typed-snapshot.js';
import { waitingReasons } from './waiting-reason.js';
import type { Turns } from '../../util/turns.js';
import { jobsInTurns } from '../paged-reads.js';
import { PolicyThread } from '../policy-thread/policy-thread.js';

/** Seconds between saves of the decayed usage of teams and users. */
const USAGE_SAVE_S = 60;

export class Round {
  private readonly counters = {
    rounds_total: 0,
    round_seconds_sum: 0,
    last_round_s: 0,
    last_round_cpu_s: 0,
    last_snapshot_s: 0,
    last_decide_s: 0,
    last_apply_s: 0,
  };
  private readonly latestRejections = new Map<string, Rejection>();
  private usage: ShareUsage | undefined;
  private savedAt_s = -Infinity;
  /** Per job, its last resize between positive sizes (kept in memory: a restart forgets it). */
  private readonly resizes = new Map<string, LastResize>();

  constructor(
    private readonly ctx: ControllerContext,
    /** Absent when the policy does not use profiles (Policy.uses_profiles). */
    private readonly profiles: ProfileBook | undefined,
    /** Devices the verdicts across ranks marked (control/ranks/device-health.ts): their nodes come last. */
    private readonly marks: () => readonly MarkedDevice[] = () => [],
  ) {}

  /** Latest reason, per job, why the policy gave it fewer devices than it wanted. */
  get rejections(): ReadonlyMap<string, Rejection> {
    return this.latestRejections;
  }

  /** Round counters for /metrics. */
  get stats(): Omit<ControllerStats, 'reports_total'> {
    return { ...this.counters };
  }

  /**
   * The nodes of this cluster as the policy sees them: per machine, one node for each GPU type on
   * it (control/loop/typed-nodes.ts), with the devices Goodput may use, nodes with marked devices last.
   */
  nodes(): NodeInfo[] {
    return typedInventory(this.ctx.config.backend.nodes(), this.marks()).nodes;
  }

  /**
   * The shares in force and the decayed usage of teams and users, advanced to now by the devices
   * `jobs` hold (charged since the last round) and saved (policy/shares/usage.ts): the memory
   * of fair share survives a restart of the server.
   */
  private async sharing(jobs: readonly JobRecord[]): Promise<{ config: SharesConfig; usage: ShareUsage }> {
    const { store } = this.ctx.config;
    const config = this.ctx.config.shares?.() ?? NO_SHARES;
    this.usage ??= await store.getShareUsage();
    const holdings = jobs
      .filter(holdsDevices)
      .map((j) => ({ user: j.user, team: teamOf(config, j.user), devices: j.allocation.length }));
    this.usage = advanceUsage(this.usage, holdings, this.ctx.now() / 1000, config.half_life_s);
    // Saved at most once a minute: rounds come every second on a busy server, and a restart loses
    // at most a minute of a memory whose half-life is days.
    if (this.usage.at_s - this.savedAt_s >= USAGE_SAVE_S)
      try {
        await store.putShareUsage(this.usage);
        this.savedAt_s = this.usage.at_s;
      } catch (error) {
        this.ctx.log(`shares: cannot save the decayed usage: ${(error as Error).message}`);
      }
    return { config, usage: this.usage };
  }

  /** Decayed usage of teams and users, as of the last round (`goodput shares`). */
  get shareUsage(): ShareUsage | undefined {
    return this.usage;
  }

  /** One round; `then` runs after the decision was applied (the launcher's pump). */
  async run(then: () => Promise<void>): Promise<void> {
    const { store, backend, policy } = this.ctx.config;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    // Jobs first, then the cluster: a job submitted after an operator's drain is then decided on
    // with the drain seen (drain-keep.ts), never with a partition state read before it.
    // A round at 16,384 GPUs is hundreds of ms of synchronous work: it gives way between its
    // parts (and within its loops and reads) so that reports are answered meanwhile (util/turns.ts).
    const turns = this.ctx.turns();
    const jobs = await jobsInTurns(store, ACTIVE_STATES, turns);
    await turns.pause();
    try {
      await backend.refresh();
    } catch (error) {
      this.ctx.log(`inventory: ${(error as Error).message}; using the last one`);
    }
    for (const p of nodeProblems(jobs, backend.nodes()))
      await this.ctx.noteOnce(p.job_id, p.key, 'node-unavailable', p.reason);
    if (jobs.length > 0) {
      const profiles = (await this.profiles?.forRound(jobs, turns)) ?? new Map<string, StoredKeyProfile>();
      await turns.pause();
      const inv = typedInventory(backend.nodes(), this.marks());
      // Stored allocations name machines; the policy's name the typed groups on them.
      const grouped = jobs.map((j) =>
        j.allocation.length > 0 ? { ...j, allocation: toGroups(inv, j.allocation, j.devices) } : j,
      );
      // Every job's facts per GPU type: a cluster of one type has one (typed-snapshot.ts).
      const types = [...new Set(inv.nodes.map(nodeType))];
      const reads = { store, machines: backend.nodes(), types, profiles: this.profiles, own_profiles: profiles };
      const per_type = new Map<string, JobTypes>();
      for (const input of await typedInputs(reads, jobs, grouped, turns)) {
        per_type.set(input.job.id, jobTypes(input, types));
        await turns.pause();
      }
      const sharing = await this.sharing(grouped);
      // A set, not a scan of the jobs per resize: 3,000 jobs and as many resizes at 16,384 GPUs.
      const active = new Set(jobs.map((j) => j.id));
      for (const id of this.resizes.keys()) if (!active.has(id)) this.resizes.delete(id);
      const snapshot = await buildSnapshot(
        inv.nodes,
        grouped,
        this.ctx.now(),
        profiles,
        per_type,
        sharing,
        this.resizes,
        turns,
      );
      await turns.pause();
      const t1 = performance.now();
      // In a worker thread where the server put the policy in one (control/policy-thread), the
      // snapshot sent in parts between turns; await either way.
      let decision = await (policy instanceof PolicyThread
        ? policy.decide(snapshot, () => turns.pause())
        : policy.decide(snapshot));
      const t2 = performance.now();
      await turns.pause();
      const marked = inv.groups.map((g) => g.marked > 0);
      const held = Object.fromEntries(grouped.map((j) => [j.id, j.allocation]));
      decision = { ...decision, allocations: avoidMarkedNodes(inv.nodes, marked, held, decision.allocations) };
      this.counters.last_snapshot_s = (t1 - t0) / 1000;
      this.counters.last_decide_s = (t2 - t1) / 1000;
      // A drained partition: no running job is stopped for a relaunch that would only wait.
      const usable = inv.groups.map((g) => g.usable.length);
      decision = { ...decision, allocations: await keepRunning(this.ctx, grouped, decision.allocations, usable) };
      this.latestRejections.clear();
      const one = deviceUnit(backend.nodes().flatMap((n) => n.devices));
      for (const [id, r] of waitingReasons(decision.rejections ?? {}, jobs, one)) this.latestRejections.set(id, r);
      const unit = `${one}(s)`;
      for (const w of gangWaits(
        jobs,
        decision.allocations,
        inv.nodes.reduce((k, n) => k + n.gpus, 0),
        unit,
      ))
        await this.ctx.noteOnce(w.job_id, w.key, 'waiting', w.reason);
      await turns.pause();
      await this.apply(grouped, decision.allocations, profiles, inv, decision.notes ?? {}, decision.gains ?? {}, turns);
      this.counters.last_apply_s = (performance.now() - t2) / 1000;
      await then();
    }
    const took_s = (performance.now() - t0) / 1000;
    this.counters.rounds_total += 1;
    this.counters.round_seconds_sum += took_s;
    this.counters.last_round_s = took_s;
    const cpu = process.cpuUsage(cpu0);
    this.counters.last_round_cpu_s = (cpu.user + cpu.system) / 1e6;
  }

  /** Applies `allocations` (on the policy's nodes) to `jobs` (their allocations on the same nodes). */
  private async apply(
    jobs: readonly JobRecord[],
    allocations: Record<string, readonly number[]>,
    profiles: ReadonlyMap<string, StoredKeyProfile>,
    inv: TypedInventory,
    notes: Readonly<Record<string, string>>,
    gains: Readonly<Record<string, GainClaim>>,
    turns: Turns,
  ): Promise<void> {
    const { store, backend, policy } = this.ctx.config;
    const nodeDevices = inv.groups.map((g) => g.usable);
    const assigned = assignDevices(jobs, allocations, nodeDevices, inv.nodes);
    if (!assigned.ok) {
      this.ctx.log(`scheduler: ignoring decision of ${policy.name}: ${assigned.reason}`);
      return;
    }
    const usable = nodeDevices.reduce((n, d) => n + d.length, 0);
    const unit = deviceUnit(backend.nodes().flatMap((n) => n.devices));
    const context = {
      policy: policy.name,
      idle: usable - jobs.filter(holdsDevices).reduce((n, j) => n + j.allocation.length, 0),
      unit,
      profiles,
    };
    for (const job of jobs) {
      await turns.pause();
      const allocation = [...(allocations[job.id] ?? [])];
      // A job between attempts that holds a device no longer usable (drained after a hang,
      // control/ranks/device-health.ts) is rebound on the same nodes before it launches again.
      const lost =
        (job.state === 'starting' || job.state === 'rescaling') &&
        job.devices.some((d, i) => !nodeDevices[job.allocation[i]!]?.includes(d));
      if (sameAllocation(allocation, job.allocation) && !lost) continue;
      const binding: DeviceBinding = {
        allocation: toMachines(inv, allocation),
        devices: assigned.devices.get(job.id) ?? [],
      };
      const [from, to] = [job.allocation.length, allocation.length];
      if (from > 0 && to > 0 && from !== to) this.resizes.set(job.id, { grew: to > from, at_ms: this.ctx.now() });
      const note = notes[job.id];
      const claim = gains[job.id];
      const why =
        (note !== undefined
          ? shareWords(note, unit)
          : resizeReason(job, from, to, claim ? { ...context, claim } : context)) +
        typeChange(inv, job.allocation, allocation);
      switch (job.state) {
        case 'queued':
        case 'preempted':
          if (allocation.length > 0) await store.assignJob(job.id, binding, this.ctx.now(), 'scheduler', why);
          break;
        case 'starting':
          if (allocation.length === 0) await store.requeueJob(job.id, 'scheduler', why);
          else await store.retargetJob(job.id, binding, 'scheduler', why);
          break;
        case 'running':
          await store.stopJob(
            job.id,
            binding,
            'rescale',
            'scheduler',
            `${why}; ${keepsWork(job) ? 'checkpoint-restart' : stopOutcome(job, this.ctx.now())}`,
          );
          for (const r of await this.ctx.liveReplicas(job.id)) backend.signal(this.ctx.ref(r), 'SIGTERM');
          break;
        case 'rescaling':
          await store.retargetJob(job.id, binding, 'scheduler', why);
          break;
        default:
          break;
      }
    }
  }
}

/** The shares layer's words for a job it shrank or stopped, in the cluster's unit ("2 cpu" -> "2 CPU slots"). */
function shareWords(note: string, unit: string): string {
  return note.replace(/ (\d+) cpu to /, (_m, n: string) => ` ${n} ${unit}${n === '1' ? '' : 's'} to `);
}

/** ' on TYPE' for a start, a move or a resize on a cluster of several GPU types; '' otherwise. */
function typeChange(inv: TypedInventory, from: readonly number[], to: readonly number[]): string {
  if (!isMixed(inv) || to.length === 0) return '';
  const type = (a: readonly number[]) => (a.length > 0 && a[0]! >= 0 ? inv.nodes[a[0]!]!.gpu_type : undefined);
  const was = type(from);
  return was !== undefined && was !== type(to) ? `; moved from ${was} to ${type(to)}` : `; on ${type(to)}`;
}
