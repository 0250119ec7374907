/**
 * `goodput profile`'s measurement: runs the user's SDK script on the devices at hand, one replica
 * count after another, through a backend (the local one: the contract's variables of
 * backends/contract-env.ts, process groups, logs and signals as for any job), and steers its
 * batch configuration through the report endpoint's answers (api/report-route.ts, served for the
 * one job; docs/contract.md) over a sweep of local batch sizes and accumulation steps; each
 * configuration's reported step and sync times become a profile point, and the replicas'
 * resident memory at each local batch the memory profile. Stops early, keeping what it measured,
 * when `signal` aborts.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import type { Backend, DeviceInfo, LaunchedReplica, ReplicaRef } from '../../backends/backend.js';
import { failureHint } from '../../control/replicas/failure-hint.js';
import { logTail } from '../../control/replicas/log-tail.js';
import { GoodputError } from '../../core/errors.js';
import type { GradSample } from '../../goodput/key-profile.js';
import { profilePoint } from '../../goodput/profile.js';
import type { BatchLimits, ProfilePoint } from '../../goodput/types.js';
import type { DeviceProfile, MemoryProfile } from '../../planner/plan-types.js';
import { ReportCollector, RssSampler, type Wanted } from './collector.js';

/** What to measure and how to tell the user. */
export interface ProfileRun {
  command: readonly string[];
  /** The directory the command runs in. */
  workdir: string;
  /** Runs the replicas; its inventory holds `devices`. Closed by runProfile. */
  backend: Backend;
  /** Devices of one node of the backend's inventory, of one type. */
  devices: readonly DeviceInfo[];
  /** That node's position in `backend.nodes()` (default 0: the local backend's one node). */
  node?: number;
  /**
   * Where the report endpoint listens and the host the replicas are given (default 127.0.0.1):
   * replicas on other nodes (Slurm) need an address they reach (datadir/replica-url.ts).
   */
  listen?: { host: string; reported_host: string };
  /** Said when a launch sends no first report in time (e.g. that a Slurm job may still wait for GPUs). */
  waiting_hint?: string;
  gpu_type: string;
  /** Wall-clock budget of the whole sweep (s). */
  time_s: number;
  work_dir: string;
  signal: AbortSignal;
  /** Progress: fraction done in [0, 1] and what is measured now. */
  progress: (fraction: number, what: string) => void;
  /** Said after the reason when the script sends no first report (why it may not report at all). */
  no_report_hint?: string;
}

/** Entries of one configuration to wait for before moving on. */
const ENTRIES_PER_CONFIG = 3;
/** Seconds to wait for a launched script's first report. */
const FIRST_REPORT_TIMEOUT_S = 90;
const GRACE_S = 10;
const LOCAL_BATCHES = 4;

/** Replica counts to measure on `devices` devices: 1, 2, 4, ... and the count itself. */
export function replicaCounts(devices: number): number[] {
  const counts: number[] = [];
  for (let r = 1; r < devices; r *= 2) counts.push(r);
  counts.push(devices);
  return counts;
}

/**
 * The configurations measured at `replicas` replicas: LOCAL_BATCHES local batches spaced
 * geometrically over the limits (total batch <= max_batch_size), ascending so that resident
 * memory grows with them, and, where the job accumulates, one with an extra micro-step first
 * (on one replica the SDK measures gradient noise only between micro-batches).
 */
export function sweepConfigs(limits: BatchLimits, replicas: number): Wanted[] {
  const lo = limits.min_local_bsz;
  const hi = Math.max(lo, Math.min(limits.max_local_bsz, Math.floor(limits.max_batch_size / replicas)));
  const batches = [
    ...new Set(
      Array.from({ length: LOCAL_BATCHES }, (_, i) => Math.round(lo * (hi / lo) ** (i / (LOCAL_BATCHES - 1)))),
    ),
  ];
  const configs: Wanted[] = batches.map((local_bsz) => ({ local_bsz, accum_steps: 0 }));
  if (limits.accumulation) configs.unshift({ local_bsz: batches[0]!, accum_steps: 1 });
  return configs;
}

/** Least-squares line of peak memory over local batch (slope >= 0). */
export function fitMemory(
  samples: readonly { local_bsz: number; peak_bytes: number }[],
  device_bytes: number,
  max_local_bsz: number,
  source: MemoryProfile['source'] = 'rss',
): MemoryProfile {
  const n = samples.length;
  const mx = samples.reduce((s, p) => s + p.local_bsz, 0) / n;
  const my = samples.reduce((s, p) => s + p.peak_bytes, 0) / n;
  const sxx = samples.reduce((s, p) => s + (p.local_bsz - mx) ** 2, 0);
  const sxy = samples.reduce((s, p) => s + (p.local_bsz - mx) * (p.peak_bytes - my), 0);
  const per_sample_bytes = sxx > 0 ? Math.max(sxy / sxx, 0) : 0;
  const base_bytes = my - per_sample_bytes * mx;
  const max_local_bsz_fit =
    per_sample_bytes > 0 ? Math.max(0, Math.floor((device_bytes - base_bytes) / per_sample_bytes)) : max_local_bsz;
  return { source, base_bytes, per_sample_bytes, device_bytes, max_local_bsz_fit, samples: [...samples] };
}

/** Runs the sweep; returns what was measured (partial when aborted) and whether it finished. */
export async function runProfile(run: ProfileRun): Promise<{ profile: DeviceProfile; complete: boolean }> {
  const collector = new ReportCollector();
  const backend = run.backend;
  const api = await collector.start(run.listen).catch((error: unknown) => {
    backend.close();
    throw error;
  });
  // The replicas of the launch measured now, and the exit codes heard of them (by rank).
  let launched: { attempt: number; job_dir: string; replicas: LaunchedReplica[] } | undefined;
  const exits = new Map<number, number>();
  backend.onExit((e) => {
    if (launched !== undefined && e.job_id === collector.job_id && e.attempt === launched.attempt)
      exits.set(e.rank, e.exit_code);
  });
  const sampler = new RssSampler(() => (launched?.replicas ?? []).filter((r) => !exits.has(r.rank)).map((r) => r.pid));
  const points: ProfilePoint[] = [];
  const memory: { local_bsz: number; peak_bytes: number }[] = [];
  const notes: string[] = [];
  const counts = replicaCounts(run.devices.length);
  const started = Date.now();
  const deadline = started + run.time_s * 1000;
  let complete = true;
  let launches = 0;
  const aborted = (): boolean => run.signal.aborted;
  let lastLog = '';
  const launch = async (replicas: number): Promise<void> => {
    // Each launch a job directory of its own: a fresh checkpoint directory, so that no launch
    // resumes from another's checkpoint at another size.
    const attempt = launches++;
    const job_dir = join(run.work_dir, `replicas-${replicas}-launch-${attempt}`);
    exits.clear();
    launched = { attempt, job_dir, replicas: [] };
    launched.replicas = await backend.launch({
      job_id: collector.job_id,
      attempt,
      command: run.command,
      workdir: run.workdir,
      // An SDK option (docs/contract.md): reports every 0.3 s, so a configuration is measured in seconds.
      env: { GOODPUT_REPORT_INTERVAL_S: '0.3' },
      devices: run.devices.slice(0, replicas).map((d) => d.index),
      nodes: run.devices.slice(0, replicas).map(() => run.node ?? 0),
      num_nodes: 1,
      api_url: api,
      token: collector.token,
      job_dir,
      gpu_type: run.gpu_type,
    });
    lastLog = launched.replicas[0]?.log_path ?? '';
  };
  const refOf = (r: LaunchedReplica, l: NonNullable<typeof launched>): ReplicaRef => ({
    job_id: collector.job_id,
    attempt: l.attempt,
    rank: r.rank,
    node: r.node,
    launch_id: r.launch_id,
    pid: r.pid,
    proc_start: r.proc_start,
    job_dir: l.job_dir,
  });
  const stopAll = async (): Promise<void> => {
    const l = launched;
    if (l === undefined) return;
    const live = () => l.replicas.filter((r) => !exits.has(r.rank) && backend.probe(refOf(r, l)) === 'alive');
    for (const r of live()) backend.signal(refOf(r, l), 'SIGTERM');
    const until = Date.now() + GRACE_S * 1000;
    while (Date.now() < until && live().length > 0) await sleep(100);
    for (const r of live()) backend.signal(refOf(r, l), 'SIGKILL');
    launched = undefined;
  };
  const running = (): boolean => launched !== undefined && launched.replicas.length > 0 && exits.size === 0;
  // What the log shows went wrong replaces the guess (`question`) when failure-hint.ts knows it.
  const failure = (what: string, question?: string): GoodputError => {
    const tail = logTail(lastLog, 15) || '(no log)';
    const why = failureHint(tail) ?? question;
    return new GoodputError('E_LAUNCH', `${what}${why ? `: ${why}` : ''}; the end of its log (${lastLog}):\n${tail}`);
  };
  let failed: GoodputError | undefined;
  const noReportHint = run.no_report_hint ?? 'is it an SDK script (goodput.torch AdaptiveDataParallel)?';
  try {
    let done = 0;
    const total = (limits: BatchLimits): number => counts.reduce((s, r) => s + sweepConfigs(limits, r).length, 0);
    for (const [i, replicas] of counts.entries()) {
      if (aborted() || Date.now() >= deadline) break;
      await launch(replicas);
      const first = collector.entries.length;
      const waitUntil = Date.now() + FIRST_REPORT_TIMEOUT_S * 1000;
      run.progress(
        done / Math.max(1, collector.limits ? total(collector.limits) : counts.length * LOCAL_BATCHES),
        `starting ${replicas} replica(s)`,
      );
      while (!aborted() && collector.entries.length === first) {
        if (!running()) throw failure(`the script exited (${exitOf(exits)}) before its first report`, noReportHint);
        if (Date.now() > waitUntil) {
          const why = run.waiting_hint ? `${run.waiting_hint}; or ${noReportHint}` : noReportHint;
          throw failure(`no report from the script within ${FIRST_REPORT_TIMEOUT_S} s`, why);
        }
        await sleep(100);
      }
      const limits = collector.limits;
      if (!limits) throw failure('the script reported without batch limits');
      const configs = sweepConfigs(limits, replicas);
      const slice_ms = (deadline - Date.now()) / (counts.length - i);
      const countEnd = Date.now() + slice_ms;
      for (const [j, config] of configs.entries()) {
        if (aborted() || Date.now() >= deadline) break;
        collector.wanted = config;
        run.progress(
          done / total(limits),
          `${replicas} replica(s), local batch ${config.local_bsz}${config.accum_steps ? `, ${config.accum_steps + 1} micro-steps` : ''}`,
        );
        const from = collector.entries.length;
        sampler.reset();
        const configEnd = Date.now() + (countEnd - Date.now()) / (configs.length - j);
        let relaunches = 0;
        const matching = () =>
          collector.entries
            .slice(from)
            .filter(
              (m) =>
                m.num_replicas === replicas && m.local_bsz === config.local_bsz && m.accum_steps === config.accum_steps,
            );
        while (!aborted() && Date.now() < configEnd && matching().length < ENTRIES_PER_CONFIG) {
          if (!running()) {
            await settle(exits, replicas);
            if ([...exits.values()].some((code) => code !== 0) || relaunches >= 3)
              throw failure(`the script exited (${exitOf(exits)}) while profiling`);
            launched = undefined;
            relaunches++;
            await launch(replicas); // the script finished its training: run it again for the rest of the sweep
          }
          await sleep(100);
        }
        const got = matching();
        if (got.length > 0) {
          const mean = (f: (m: (typeof got)[number]) => number): number =>
            got.reduce((s, m) => s + f(m), 0) / got.length;
          const point = profilePoint({
            num_nodes: 1,
            num_replicas: replicas,
            local_bsz: config.local_bsz,
            accum_steps: config.accum_steps,
            step_time_s: mean((m) => m.step_time_s),
            sync_time_s: mean((m) => m.sync_time_s),
          });
          const sameBatch = points.findIndex((p) => p.num_replicas === replicas && p.local_bsz === config.local_bsz);
          if (sameBatch >= 0 && config.accum_steps === 0)
            points[sameBatch] = point; // the accumulation-free measurement wins
          else if (sameBatch < 0) points.push(point);
          if (config.accum_steps === 0 && replicas === counts[0])
            memory.push({ local_bsz: config.local_bsz, peak_bytes: memoryPeak(run, got, sampler.peak()) });
        } else if (!aborted()) {
          notes.push(
            `no measurement at ${replicas} replica(s), local batch ${config.local_bsz} within its share of --time-s`,
          );
        }
        done++;
      }
      await stopAll();
    }
  } catch (error) {
    if (!(error instanceof GoodputError) || points.length === 0) throw error;
    failed = error; // keep what was measured before the script failed
    complete = false;
  } finally {
    sampler.stop();
    await stopAll();
    backend.close();
    await collector.close();
  }
  if (aborted()) notes.push('interrupted: the profile holds what was measured before Ctrl-C');
  if (failed) notes.push(`stopped early: ${failed.message.split('\n')[0]}`);
  return { profile: buildProfile(run, collector, points, memory, notes), complete: complete && !aborted() };
}

function buildProfile(
  run: ProfileRun,
  collector: ReportCollector,
  points: ProfilePoint[],
  memory: { local_bsz: number; peak_bytes: number }[],
  notes: string[],
): DeviceProfile {
  const withGrad = [...collector.entries]
    .reverse()
    .find((m) => typeof m.grad_sqr === 'number' && typeof m.grad_var === 'number');
  const grad: GradSample[] = withGrad
    ? [{ progress: 0, sqr: withGrad.grad_sqr as number, var: withGrad.grad_var as number }]
    : [];
  const parameters =
    [...collector.entries].reverse().find((m) => typeof m.model_parameters === 'number')?.model_parameters ?? undefined;
  const profile: DeviceProfile = { gpu_type: run.gpu_type, points, grad, limits: collector.limits, notes };
  if (parameters !== undefined && parameters !== null) profile.model_parameters = parameters;
  if (!withGrad)
    notes.push(
      'gradient noise not measured (one replica without accumulation): the planner assumes statistical efficiency 1 at the initial batch size',
    );
  if (run.devices.length < 2)
    notes.push(
      'one device: synchronization between replicas not measured (the planner estimates it from the specs and the parameter count)',
    );
  notes.push(
    "cross-node synchronization not measured (one node): the planner estimates it from the GPU table's network bandwidth",
  );
  notes.push(
    `only ${run.gpu_type} measured: goodput plan transfers other types from keys measured on both, else estimates them from the GPU table`,
  );
  const gpu = run.devices[0]?.kind === 'gpu' ? run.devices[0] : undefined;
  const measured = memory.filter((m) => m.peak_bytes > 0);
  if (gpu && measured.length < memory.length)
    notes.push(
      'GPU memory not measured (the script reported no allocator peak: an SDK without ' +
        'memory_peak_bytes, or not on CUDA): the planner cannot check that a batch fits',
    );
  else if (gpu && gpu.memory_mib === undefined)
    notes.push("GPU memory measured, but the device's size is unknown: the planner cannot check that a batch fits");
  else if (measured.length >= 2 && collector.limits) {
    const device_bytes = gpu ? (gpu.memory_mib as number) * 2 ** 20 : totalmem() / run.devices.length;
    profile.memory = fitMemory(measured, device_bytes, collector.limits.max_local_bsz, gpu ? 'allocator' : 'rss');
  } else notes.push('memory per sample not measured (fewer than two local batch sizes)');
  return profile;
}

/**
 * A configuration's peak memory per replica (bytes): on GPUs the largest allocator peak its
 * reports carried (0 when none did), on CPU slots the sampled resident memory `rss_bytes`.
 */
export function memoryPeak(
  run: Pick<ProfileRun, 'devices'>,
  entries: readonly { memory_peak_bytes?: number | null | undefined }[],
  rss_bytes: number,
): number {
  if (run.devices[0]?.kind !== 'gpu') return rss_bytes;
  return entries.reduce((peak, m) => Math.max(peak, m.memory_peak_bytes ?? 0), 0);
}

/** Waits (at most GRACE_S) for every replica to end once one has: the others follow it at the end of training. */
async function settle(exits: ReadonlyMap<number, number>, replicas: number): Promise<void> {
  const until = Date.now() + GRACE_S * 1000;
  while (Date.now() < until && exits.size < replicas) await sleep(100);
}

/** How the launch ended, by its first failed rank (shell convention: 128 + n for signal n). */
function exitOf(exits: ReadonlyMap<number, number>): string {
  const codes = [...exits.entries()].sort((a, b) => a[0] - b[0]);
  const [rank, code] = codes.find(([, c]) => c !== 0) ?? codes[0] ?? [undefined, undefined];
  if (code === undefined) return 'no process';
  return `${code > 128 ? `signal ${code - 128}, exit ${code}` : `exit ${code}`}${codes.length > 1 ? ` of rank ${rank}` : ''}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A fresh work directory for one profile run. */
export function workDir(base: string): string {
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, 'goodput-profile-'));
}
