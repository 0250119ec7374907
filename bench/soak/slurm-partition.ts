/**
 * The Slurm partition faults of `npm run bench:soak -- --faults slurm-partition` (issue 47): on a
 * real test cluster (slurmctld and two slurmd, 4 fake GPUs each) with a real `goodput up
 * --backend slurm`, jobs that run and checkpoint meet a drained partition, then a DOWN one. In
 * each fault the running jobs are made to relaunch (the rescale's stop signal to their Slurm
 * jobs: they checkpoint and exit 143) and one more job is submitted; the partition stays in that
 * state past the hung timeout, then comes back. Counted per fault: jobs failed, jobs stuck (not
 * running again within a minute of the partition's return), jobs that did not resume from their
 * checkpoint, failures counted against max_restarts, hung events, jobs shown `running` while
 * Slurm held them, GPUs counted allocated while held, and the time from the partition's return to
 * every job running. Target: 0 jobs failed by a drained or down partition.
 *
 * Then a drain meets a rescale the control plane decides (an elastic policy, its own server on the
 * same cluster): a job runs on all 8 GPUs, the partition is drained and a second job submitted,
 * which the policy makes room for by shrinking the first. Counted: running jobs stopped while
 * drained (a new attempt or a stop event; target 0: a drain stops new work, never running work),
 * and the seconds from the partition's return to the rescale done and the second job running.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  slurmMissing,
  slurmUpArgs,
  startSlurmCluster,
  type SlurmCluster,
} from '../../src/backends/slurm/testing/slurm-cluster.js';
import type { JobDetail } from '../../src/client/client.js';
import { gpusAllocated, serverSet, trainerCommand, trainerLines } from '../../test-support/control/harness.js';
import type { ServerProcess } from '../../test-support/control/harness.js';
import { setPartitionState, signalRescale, untilNoSlurmJobs } from '../../test-support/slurm/slurm-suite.js';
import { sleep, waitFor } from './server.js';

/** What one partition fault did to the jobs that met it. */
export interface PartitionFaultResult {
  fault: 'drained partition' | 'down partition';
  jobs: number;
  /** Jobs that ended `failed` (the target: 0). */
  jobs_failed: number;
  /** Jobs not running again within a minute of the partition's return. */
  jobs_stuck: number;
  /** Running jobs whose relaunch did not resume from their checkpoint (step 0). */
  not_resumed: number;
  /** Failures counted against max_restarts while the partition was out. */
  failures_counted: number;
  hung_events: number;
  /**
   * Samples (every 500 ms while the partition was out) of a job shown `running` while Slurm
   * lists its attempt PENDING.
   */
  shown_running_while_held: number;
  /** The most GPUs /metrics counted allocated while every job was held. */
  gpus_allocated_while_held: number;
  /** Seconds from the partition's return to every job running again. */
  recovery_s: number;
  /** Slurm's words as the jobs' launch waits showed them. */
  notes: string[];
}

/** What a rescale decided while the partition was drained did (drainRescale). */
export interface DrainRescaleResult {
  /** Jobs running when the partition was drained. */
  running_jobs: number;
  /** Of those, stopped while it was drained: a new attempt or a rescale event (target 0). */
  stopped_while_drained: number;
  /** `kept on ...` events recorded while drained. */
  kept_events: number;
  /** Seconds from the partition's return to the first job rescaled and the second running (NaN: not in 120 s). */
  rescaled_after_s: number;
}

/** Everything one `--faults slurm-partition` run measured. */
export interface SlurmPartitionResults {
  faults: PartitionFaultResult[];
  drain_rescale: DrainRescaleResult;
}

/** Options of a run. */
export interface SlurmPartitionOptions {
  /** Jobs running when the fault begins (each 2 GPUs). Default 2. */
  running_jobs?: number;
  /** Seconds the partition stays out (past the hung timeout). Default hung timeout + 7. */
  hold_s?: number;
  /** The server's --hung-timeout-s. Default 10 (a running trainer on a loaded machine may go quiet for seconds). */
  hung_timeout_s?: number;
}

/** Runs both faults on a fresh test cluster; undefined (with the reason) where Slurm cannot run here. */
export async function slurmPartitionFaults(o: SlurmPartitionOptions = {}): Promise<SlurmPartitionResults | string> {
  const missing = slurmMissing();
  if (missing) return missing;
  const cluster = await startSlurmCluster();
  process.env.SLURM_CONF = cluster.env.SLURM_CONF;
  const hung_s = o.hung_timeout_s ?? 10;
  const servers = serverSet('goodput-soak-slurm-');
  try {
    const server = await servers.start(slurmUpArgs('fifo', ['--hung-timeout-s', String(hung_s)]));
    const hold_s = o.hold_s ?? Math.max(12, hung_s + 7);
    const faults: PartitionFaultResult[] = [];
    for (const state of ['DRAIN', 'DOWN'] as const)
      faults.push(await fault(cluster, server, state, o.running_jobs ?? 2, hold_s));
    // One server on the cluster at a time: the elastic one of drainRescale next.
    servers.cleanupAll();
    return { faults, drain_rescale: await drainRescale(cluster, hold_s) };
  } finally {
    servers.cleanupAll();
    await cluster.stop();
  }
}

async function fault(
  cluster: SlurmCluster,
  s: ServerProcess,
  state: 'DRAIN' | 'DOWN',
  count: number,
  hold_s: number,
): Promise<PartitionFaultResult> {
  const c = s.client;
  const ids: string[] = [];
  for (let k = 0; k < count; k++) {
    const spec = {
      name: `${state.toLowerCase()}-${k}`,
      command: trainerCommand(2000000),
      workdir: s.data_dir,
      min_replicas: 2,
      max_replicas: 2,
    };
    ids.push((await c.submit(spec)).id);
  }
  const before = await waitFor('the jobs to run and report', 180_000, async () => {
    const jobs = await Promise.all(ids.map((id) => c.getJob(id)));
    return jobs.every((j) => j.state === 'running' && j.step > 0) ? jobs : undefined;
  });
  const partition = (to: 'UP' | 'DRAIN' | 'DOWN') => setPartitionState(cluster, to);
  await partition(state);
  const notes = new Set<string>();
  let shown = 0;
  let allocated = 0;
  try {
    // The rescale's stop signal (28, WINCH): each trainer checkpoints, exits 143 and is relaunched.
    for (const j of before) await signalRescale(cluster, j);
    const late = await c.submit({
      name: `${state.toLowerCase()}-new`,
      command: trainerCommand(2000000),
      workdir: s.data_dir,
      min_replicas: 2,
      max_replicas: 2,
    });
    ids.push(late.id);
    await sleep(3000);
    const end = Date.now() + hold_s * 1000;
    while (Date.now() < end) {
      const pending = (await cluster.cmd('squeue', ['-h', '-t', 'PENDING', '-o', '%j']))
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      for (const id of ids) {
        const j = await c.getJob(id);
        if (j.launch_wait) notes.add(j.launch_wait.replace(/\d+/g, 'N'));
        const attempt = j.current_replicas.find((r) => r.exit_code === null)?.attempt;
        if (j.state === 'running' && pending.some((name) => name.endsWith(`-${id}-${attempt}`))) shown++;
      }
      // Read between two looks that find every job waiting with a reason (not one being launched at that moment).
      const allHeld = async () =>
        (await Promise.all(ids.map((id) => c.getJob(id)))).every(
          (j) => j.state === 'starting' && j.launch_wait !== null,
        );
      if (await allHeld()) {
        const gpus = await gpusAllocated(c);
        if (await allHeld()) allocated = Math.max(allocated, gpus);
      }
      await sleep(500);
    }
  } finally {
    await partition('UP');
  }
  const up_ms = Date.now();
  let recovery_s = NaN;
  await waitFor('every job to run again', 60_000, async () => {
    const jobs = await Promise.all(ids.map((id) => c.getJob(id)));
    return jobs.every((j) => j.state === 'running' || j.state === 'failed') ? jobs : undefined;
  }).then(
    () => (recovery_s = (Date.now() - up_ms) / 1000),
    () => undefined,
  );
  const after = await Promise.all(ids.map((id) => c.getJob(id)));
  let not_resumed = 0;
  for (const j of before) {
    const now = after.find((x) => x.id === j.id)!;
    const attempt = now.current_replicas.find((r) => r.exit_code === null)?.attempt;
    const resumed = await waitFor(`${j.name} to resume`, 30_000, async () => {
      const lines = trainerLines(readFileSync(join(s.data_dir, 'jobs', j.id, 'logs', 'replica-0.log'), 'utf8'));
      return lines.find((l) => l.kind === 'resumed' && l.attempt === attempt);
    }).catch(() => undefined);
    if (!resumed || resumed.step === 0) not_resumed++;
  }
  let hung = 0;
  for (const id of ids) hung += (await c.events(id)).filter((e) => e.kind === 'hung').length;
  const result: PartitionFaultResult = {
    fault: state === 'DRAIN' ? 'drained partition' : 'down partition',
    jobs: ids.length,
    jobs_failed: after.filter((j) => j.state === 'failed').length,
    jobs_stuck: after.filter((j) => j.state !== 'running' && j.state !== 'failed').length,
    not_resumed,
    failures_counted: after.reduce((n, j) => n + j.failures, 0),
    hung_events: hung,
    shown_running_while_held: shown,
    gpus_allocated_while_held: allocated,
    recovery_s,
    notes: [...notes],
  };
  for (const id of ids) await c.cancel(id).catch(() => undefined);
  await untilNoSlurmJobs(cluster).catch(() => undefined);
  return result;
}

/** A job on all 8 GPUs under an elastic policy; the partition drained; a second job asks for a share. */
async function drainRescale(cluster: SlurmCluster, hold_s: number): Promise<DrainRescaleResult> {
  const servers = serverSet('goodput-soak-keep-');
  const s = await servers.start(slurmUpArgs('optimus'));
  const c = s.client;
  const partition = (to: 'UP' | 'DRAIN' | 'DOWN') => setPartitionState(cluster, to);
  const trainer = (name: string, max_replicas: number) =>
    c.submit({
      name,
      command: trainerCommand(4000000),
      workdir: s.data_dir,
      min_replicas: 1,
      max_replicas,
    });
  const attemptOf = (j: JobDetail) =>
    j.current_replicas
      .filter((r) => r.exit_code === null)
      .map((r) => `${r.attempt}/${r.launch_id}`)
      .join(',');
  try {
    const a = await trainer('keep-a', 8);
    const wide = await waitFor('keep-a to run on 8 GPUs and report', 180_000, async () => {
      const j = await c.getJob(a.id);
      return j.state === 'running' && j.replicas === 8 && j.step > 0 ? j : undefined;
    });
    await partition('DRAIN');
    let stopped = false;
    let kept = 0;
    let b: JobDetail | undefined;
    try {
      b = await c.getJob((await trainer('keep-b', 4)).id);
      const end = Date.now() + hold_s * 1000;
      while (Date.now() < end && !stopped) {
        const j = await c.getJob(a.id);
        stopped =
          j.state !== 'running' ||
          attemptOf(j) !== attemptOf(wide) ||
          (await c.events(a.id)).some((e) => e.kind === 'rescale');
        await sleep(500);
      }
      kept = (await c.events(a.id)).filter((e) => e.kind === 'waiting' && e.reason.startsWith('kept on')).length;
    } finally {
      await partition('UP');
    }
    const up_ms = Date.now();
    const second = b!.id;
    const rescaled_after_s = await waitFor('keep-a rescaled and keep-b running', 120_000, async () => {
      const [x, y] = await Promise.all([c.getJob(a.id), c.getJob(second)]);
      return x.state === 'running' && attemptOf(x) !== attemptOf(wide) && y.state === 'running'
        ? (Date.now() - up_ms) / 1000
        : undefined;
    }).catch(() => NaN);
    return { running_jobs: 1, stopped_while_drained: stopped ? 1 : 0, kept_events: kept, rescaled_after_s };
  } finally {
    for (const j of await c.listJobs()) await c.cancel(j.id).catch(() => undefined);
    await untilNoSlurmJobs(cluster).catch(() => undefined);
    servers.cleanupAll();
  }
}

/** The lines bench:soak prints for these faults: per fault what was lost, stuck or slow, then the targets. */
export function slurmPartitionLines(all: SlurmPartitionResults | string): string[] {
  if (typeof all === 'string') return [`  slurm partition faults: skipped (${all})`];
  const results = all.faults;
  const lines = results.map(
    (r) =>
      `  ${r.fault.padEnd(17)} ${r.jobs} jobs: failed ${r.jobs_failed}, stuck ${r.jobs_stuck}, not resumed from checkpoint ${r.not_resumed}, failures counted ${r.failures_counted}, hung ${r.hung_events}, shown running while held ${r.shown_running_while_held}, GPUs allocated while held ${r.gpus_allocated_while_held}, running again ${Number.isNaN(r.recovery_s) ? 'never (60 s)' : `${r.recovery_s.toFixed(1)} s`} after the partition's return\n      waits seen: ${r.notes.join(' | ') || '-'}`,
  );
  const failed = results.reduce((n, r) => n + r.jobs_failed, 0);
  const bad = results.reduce(
    (n, r) =>
      n + r.jobs_stuck + r.not_resumed + r.hung_events + r.shown_running_while_held + r.gpus_allocated_while_held,
    0,
  );
  lines.push(
    `  ${failed} jobs failed by a drained or down partition (target 0): ${failed === 0 && bad === 0 ? 'MET' : 'NOT MET'}`,
  );
  const d = all.drain_rescale;
  const after = Number.isNaN(d.rescaled_after_s) ? 'not within 120 s' : `${d.rescaled_after_s.toFixed(1)} s`;
  lines.push(
    `  drained partition, rescale asked: ${d.running_jobs} running job(s), kept-on events ${d.kept_events}, rescaled and the new job running ${after} after the partition's return`,
  );
  const met = d.stopped_while_drained === 0 && !Number.isNaN(d.rescaled_after_s);
  lines.push(`  ${d.stopped_while_drained} running jobs stopped while drained (target 0): ${met ? 'MET' : 'NOT MET'}`);
  return lines;
}
