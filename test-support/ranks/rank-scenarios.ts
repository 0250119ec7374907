/**
 * Injected rank faults on a real `goodput up` (local backend on CPU slots, or the Slurm test
 * cluster; real torch with gloo): one slow rank, one hung rank (stopped, or blocked in a collective
 * the others skipped; injected inside the job, so on any backend), or none; each measures how long the control plane takes to
 * name the rank (GET /v1/jobs/{id}/ranks, the job's events). Shared by bench/doctor-live.ts and
 * src/control/e2e-ranks.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventView, GoodputClient, JobDetail, JobSpecInput } from '../../src/client/client.js';
import { sleep, waitFor } from '../control/harness.js';

export const RANK_FAULTS = join(import.meta.dirname, '..', '..', '..', 'test-support', 'ranks', 'rank_faults.py');

export type SlowPhase = 'compute' | 'between' | 'data' | 'hog' | 'hog-process';

/** How a rank hangs: it stops itself (SIGSTOP), or it waits in a collective the other ranks skipped. */
export type HangKind = 'stop' | 'collective';

export interface ScenarioResult {
  /** The rank the control plane named (null: none) and the one injected (null: healthy). */
  named: number | null;
  injected: number | null;
  /** Seconds from steady reports (straggler) or the stop (hang) to the verdict; null without one. */
  time_s: number | null;
  /** Healthy runs: verdicts seen (false alarms). */
  alarms: number;
  /** Hangs: seconds from the stop until the job ran a step past its checkpoint again; null: not seen. */
  resume_s: number | null;
  line: string;
  /** Hangs: whether the resumed attempt holds none of what the `rank-hung` event drained; null: not resumed. */
  avoided?: boolean | null;
  /** Hangs: the job's events from the hang on, `kind +s`, for where the time went. */
  timeline?: string;
}

/**
 * The job of rank_faults.py run by `python` with `args` (which faults, on which rank) in
 * `workdir`, on `replicas` ranks, or from `[min, max]` ranks as the policy gives.
 */
export function rankFaultsJob(
  name: string,
  python: string,
  workdir: string,
  replicas: number | readonly [number, number],
  args: readonly string[],
): JobSpecInput {
  const [min_replicas, max_replicas] = typeof replicas === 'number' ? [replicas, replicas] : replicas;
  return { name, command: [python, RANK_FAULTS, ...args], workdir, min_replicas, max_replicas };
}

async function submit(client: GoodputClient, python: string, replicas: number, args: string[]): Promise<JobDetail> {
  const workdir = join(import.meta.dirname, '..', '..', '..');
  const job = await client.submit(rankFaultsJob(`ranks-${Date.now()}`, python, workdir, replicas, args));
  return client.getJob(job.id);
}

/** Waits until `replicas` ranks of job `id` each reported steps (GET /v1/jobs/{id}/ranks); answers when (ms). */
export async function untilRanksReport(
  client: GoodputClient,
  id: string,
  replicas: number,
  timeout_ms: number,
): Promise<number> {
  await waitFor(`${replicas} ranks of ${id} to report steps`, timeout_ms, async () => {
    const v = await client.ranks(id);
    return v.ranks.length === replicas && v.ranks.every((r) => r.step_s !== null) ? true : undefined;
  });
  return Date.now();
}

async function end(client: GoodputClient, id: string): Promise<void> {
  await client.cancel(id).catch(() => undefined);
  await waitFor(`${id} to end`, 60_000, async () => {
    const j = await client.getJob(id);
    return j.current_replicas.every((r) => r.exit_code !== null) ? true : undefined;
  }).catch(() => undefined);
}

/** One slow rank: the time from steady reports to the straggler verdict (limit `limit_s`). */
export async function stragglerScenario(
  client: GoodputClient,
  python: string,
  o: { replicas: number; rank: number; phase: SlowPhase; slow_ms: number; limit_s: number },
): Promise<ScenarioResult> {
  const args = ['--slow-rank', String(o.rank), '--slow-ms', String(o.slow_ms), '--slow-phase', o.phase];
  const job = await submit(client, python, o.replicas, args);
  try {
    const t0 = await untilRanksReport(client, job.id, o.replicas, 180_000);
    while (Date.now() - t0 < o.limit_s * 1000) {
      const v = await client.ranks(job.id);
      if (v.straggler)
        return {
          named: v.straggler.rank,
          injected: o.rank,
          time_s: (Date.now() - t0) / 1000,
          alarms: 0,
          resume_s: null,
          line: v.straggler.line,
        };
      await sleep(500);
    }
    return { named: null, injected: o.rank, time_s: null, alarms: 0, resume_s: null, line: '' };
  } finally {
    await end(client, job.id);
  }
}

/**
 * One rank hangs (`kind`) 12 s into its steps, on the job's first attempt: the time from the hang
 * (as the rank recorded it in its checkpoint directory, jobs/ID/checkpoint/fault-at under the
 * server's `data_dir`) to the `rank-hung` event, and to the job running a step past its checkpoint
 * again in a later attempt.
 */
export async function hangScenario(
  client: GoodputClient,
  python: string,
  o: { replicas: number; rank: number; kind: HangKind; data_dir: string; limit_s: number; resume_limit_s: number },
): Promise<ScenarioResult> {
  const args = ['--hang-rank', String(o.rank), '--hang-kind', o.kind, '--hang-after-s', '12'];
  const job = await submit(client, python, o.replicas, args);
  const fault = join(o.data_dir, 'jobs', job.id, 'checkpoint', 'fault-at');
  try {
    await untilRanksReport(client, job.id, o.replicas, 180_000);
    const t0 = await waitFor('the rank to hang', 60_000, async () =>
      existsSync(fault) ? Number(readFileSync(fault, 'utf8').split(' ')[0]) * 1000 : undefined,
    );
    const attempt = Math.max(...(await client.getJob(job.id)).current_replicas.map((r) => r.attempt));
    let hung: EventView | undefined;
    let time_s: number | null = null;
    while (Date.now() - t0 < o.limit_s * 1000) {
      hung = (await client.events(job.id)).find((e) => e.kind === 'rank-hung');
      if (hung) {
        time_s = (Date.now() - t0) / 1000;
        break;
      }
      await sleep(500);
    }
    let resume_s: number | null = null;
    let avoided: boolean | null = null;
    if (hung) {
      const step = (await client.getJob(job.id)).step;
      const resumed = await waitFor('the job to resume', o.resume_limit_s * 1000, async () => {
        const j = await client.getJob(job.id);
        const again = j.state === 'running' && j.current_replicas.some((r) => r.attempt > attempt);
        return again && j.step > step ? j : undefined;
      }).catch(() => undefined);
      if (resumed) {
        resume_s = (Date.now() - t0) / 1000;
        // The drained device, or every device of the node where the backend drains whole nodes.
        const marks = (await client.events(job.id)).filter((e) => e.kind === 'device-marked');
        avoided = !resumed.current_replicas.some((r) =>
          marks.some((m) => m.data.node === r.node && (m.data.device === null || m.data.device === r.device)),
        );
      }
    }
    const timeline = (await client.events(job.id))
      .map((e) => ({ kind: e.kind, s: (Date.parse(e.at) - t0) / 1000 }))
      .filter((e) => e.s >= 0)
      .map((e) => `${e.kind} +${e.s.toFixed(1)}`)
      .join(', ');
    const named = hung ? Number(hung.data.rank) : null;
    return { named, injected: o.rank, time_s, alarms: 0, resume_s, line: hung?.reason ?? '', avoided, timeline };
  } finally {
    await end(client, job.id);
    for (const n of await client.nodes()) await client.clearNode(n.name);
  }
}

/** A healthy job for `seconds` after steady reports: verdicts seen are false alarms. */
export async function healthyScenario(
  client: GoodputClient,
  python: string,
  o: { replicas: number; seconds: number },
): Promise<ScenarioResult> {
  const job = await submit(client, python, o.replicas, []);
  try {
    const t0 = await untilRanksReport(client, job.id, o.replicas, 180_000);
    let alarms = 0;
    let line = '';
    while (Date.now() - t0 < o.seconds * 1000) {
      const v = await client.ranks(job.id);
      if (v.straggler || v.hang) {
        alarms++;
        line = (v.straggler ?? v.hang)!.line;
      }
      await sleep(1000);
    }
    const events = (await client.events(job.id)).filter((e) => e.kind === 'straggler' || e.kind === 'rank-hung');
    return { named: null, injected: null, time_s: null, alarms: Math.max(alarms, events.length), resume_s: null, line };
  } finally {
    await end(client, job.id);
  }
}
