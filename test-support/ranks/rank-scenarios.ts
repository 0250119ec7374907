/**
 * Injected rank faults on a real `goodput up` (local backend, CPU slots, real torch with gloo):
 * one slow rank, one SIGSTOPped rank, or none; each measures how long the control plane takes to
 * name the rank (GET /v1/jobs/{id}/ranks, the job's events). Shared by bench/doctor-live.ts and
 * src/control/e2e-ranks.test.ts.
 */
import { join } from 'node:path';
import type { GoodputClient, JobDetail } from '../../src/client/client.js';
import { sleep, waitFor } from '../control/harness.js';

export const RANK_FAULTS = join(import.meta.dirname, '..', '..', '..', 'test-support', 'ranks', 'rank_faults.py');

export type SlowPhase = 'compute' | 'between' | 'data' | 'hog';

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
}

async function submit(client: GoodputClient, python: string, replicas: number, args: string[]): Promise<JobDetail> {
  const job = await client.submit({
    name: `ranks-${Date.now()}`,
    command: [python, RANK_FAULTS, ...args],
    workdir: join(import.meta.dirname, '..', '..', '..'),
    min_replicas: replicas,
    max_replicas: replicas,
  });
  return client.getJob(job.id);
}

/** Waits until every rank reported steps; answers when (ms). */
async function steady(client: GoodputClient, id: string, replicas: number, timeout_ms: number): Promise<number> {
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
    const t0 = await steady(client, job.id, o.replicas, 180_000);
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

/** One rank stopped (SIGSTOP): the time to the `rank-hung` event and to the job's resumption. */
export async function hangScenario(
  client: GoodputClient,
  python: string,
  o: { replicas: number; rank: number; limit_s: number; resume_limit_s: number },
): Promise<ScenarioResult> {
  const job = await submit(client, python, o.replicas, []);
  try {
    await steady(client, job.id, o.replicas, 180_000);
    await sleep(3000);
    const detail = await client.getJob(job.id);
    const victim = detail.current_replicas.find((r) => r.rank === o.rank && r.exit_code === null)!;
    const attempt = victim.attempt;
    process.kill(-victim.pid, 'SIGSTOP');
    const t0 = Date.now();
    let named: number | null = null;
    let time_s: number | null = null;
    let line = '';
    while (Date.now() - t0 < o.limit_s * 1000) {
      const hung = (await client.events(job.id)).find((e) => e.kind === 'rank-hung');
      if (hung) {
        named = Number(hung.data.rank);
        time_s = (Date.now() - t0) / 1000;
        line = hung.reason;
        break;
      }
      await sleep(500);
    }
    let resume_s: number | null = null;
    if (named !== null) {
      const step = (await client.getJob(job.id)).step;
      await waitFor('the job to resume', o.resume_limit_s * 1000, async () => {
        const j = await client.getJob(job.id);
        const again = j.state === 'running' && j.current_replicas.some((r) => r.attempt > attempt);
        return again && j.step > step ? true : undefined;
      }).then(
        () => (resume_s = (Date.now() - t0) / 1000),
        () => undefined,
      );
    }
    return { named, injected: o.rank, time_s, alarms: 0, resume_s, line };
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
    const t0 = await steady(client, job.id, o.replicas, 180_000);
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
