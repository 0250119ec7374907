/**
 * `npm run bench:live`: issue #12's first-minutes scenarios against a real `goodput up` (temp
 * data dir, loopback, CPU slots), timed from the first submission:
 *  (a) three plain 20 s jobs (no SDK, no checkpoint) on 2 slots, `--interval-s 5`: when the
 *      last one finishes (40 s is the least possible, target <= 60 s) and the restarts;
 *  (b) the same with kill -9 of the server 6 s in and `goodput up` again on the same port;
 *  (c) baseline, the behaviour of issue #12: the same jobs marked `preemptible: true` under
 *      least attained service without hysteresis (one queue per 0.1 GPU-s, no slice, no cap),
 *      stopped after `--baseline-limit-s`;
 *  (d) eight synthetic SDK jobs of unknown length (4 of ~2 s, 4 of ~20 s alone) on 2 slots.
 *
 *   node dist/bench/live.js [--interval-s 5] [--baseline-limit-s 120] [--skip-baseline]
 */
import type { GoodputClient, JobDetail } from '../src/client/client.js';
import {
  cleanup,
  killGroup,
  PLAIN_20S,
  sleep,
  startServerProcess,
  tempDataDir,
  TRAINER,
  type ServerProcess,
} from '../test-support/control/harness.js';
import { benchArgs } from './bench-args.js';

const USAGE = `
usage: node dist/bench/live.js [--interval-s 5] [--baseline-limit-s 120] [--skip-baseline]
The first-minutes scenarios of issue #12 against a real 'goodput up' (npm run bench:live).
`;
const values = benchArgs(USAGE, {
  'interval-s': { type: 'string', default: '5' },
  'baseline-limit-s': { type: 'string', default: '120' },
  'skip-baseline': { type: 'boolean', default: false },
});
const interval = values['interval-s'];
const baseArgs = ['--cpu-slots', '2', '--interval-s', interval, '--grace-s', '3'];

interface Outcome {
  last_finish_s: number | null;
  restarts: number[];
  states: string[];
  jobs: JobDetail[];
}

/** Polls until every job ended or `limit_s` passed since `t0_ms`. */
async function outcome(
  client: () => GoodputClient,
  ids: readonly string[],
  t0_ms: number,
  limit_s: number,
): Promise<Outcome> {
  for (;;) {
    const jobs = await Promise.all(ids.map((id) => client().getJob(id)));
    const ended = jobs.every((j) => ['succeeded', 'failed', 'cancelled'].includes(j.state));
    if (ended || Date.now() - t0_ms > limit_s * 1000) {
      const finish = jobs.map((j) => (j.finished_at ? Date.parse(j.finished_at) : NaN));
      return {
        last_finish_s: ended ? (Math.max(...finish) - t0_ms) / 1000 : null,
        restarts: jobs.map((j) => j.restarts),
        states: jobs.map((j) => j.state),
        jobs,
      };
    }
    await sleep(250);
  }
}

async function scenario<T>(run: (dir: string, servers: ServerProcess[]) => Promise<T>): Promise<T> {
  const dir = tempDataDir('goodput-bench-live-');
  const servers: ServerProcess[] = [];
  try {
    return await run(dir, servers);
  } finally {
    cleanup(dir, servers);
  }
}

async function plainJobs(kill: boolean, baseline: boolean, limit_s: number): Promise<Outcome> {
  return scenario(async (dir, servers) => {
    const params = baseline
      ? [
          'queue_base_gpu_s=0.1',
          'queue_factor=1.0001',
          'queue_count=1000000',
          'min_slice_restarts=0',
          'starvation_factor=0',
          'max_preemptions=1000000',
        ].flatMap((p) => ['--policy-param', p])
      : [];
    let server = await startServerProcess(dir, [...baseArgs, ...params]);
    servers.push(server);
    const t0 = Date.now();
    const ids: string[] = [];
    for (const name of ['bar-1', 'bar-2', 'bar-3']) {
      ids.push(
        (
          await server.client.submit({
            name,
            command: [...PLAIN_20S],
            workdir: dir,
            ...(baseline ? { preemptible: true } : {}),
          })
        ).id,
      );
    }
    if (kill) {
      await sleep(Math.max(0, t0 + 6000 - Date.now()));
      killGroup(server.pid);
      server = await startServerProcess(dir, [...baseArgs, ...params, '--port', new URL(server.url).port]);
      servers.push(server);
    }
    const result = await outcome(() => server.client, ids, t0, limit_s);
    if (baseline) for (const id of ids) await server.client.cancel(id).catch(() => undefined);
    return result;
  });
}

async function sdkJobs(): Promise<Outcome & { last_short_s: number; first_long_s: number }> {
  return scenario(async (dir, servers) => {
    const params = ['restart_delay_s=1', 'queue_base_gpu_s=4', 'min_slice_restarts=3'].flatMap((p) => [
      '--policy-param',
      p,
    ]);
    const server = await startServerProcess(dir, [
      '--cpu-slots',
      '2',
      '--interval-s',
      '1',
      '--grace-s',
      '3',
      ...params,
    ]);
    servers.push(server);
    const lengths = [25_000, 2_500, 25_000, 2_500, 25_000, 2_500, 25_000, 2_500];
    const t0 = Date.now();
    const ids: string[] = [];
    for (const [i, samples] of lengths.entries()) {
      const command = [process.execPath, TRAINER, '--samples', String(samples), '--unknown-length'];
      ids.push((await server.client.submit({ name: `sdk-${i}`, command, workdir: dir })).id);
    }
    const result = await outcome(() => server.client, ids, t0, 300);
    const at = (j: JobDetail) => (Date.parse(j.finished_at ?? '') - t0) / 1000;
    const short = result.jobs.filter((_, i) => lengths[i] === 2_500).map(at);
    const long = result.jobs.filter((_, i) => lengths[i] === 25_000).map(at);
    return { ...result, last_short_s: Math.max(...short), first_long_s: Math.min(...long) };
  });
}

const fmt = (o: Outcome) =>
  `last finish ${o.last_finish_s === null ? 'NOT FINISHED' : `${o.last_finish_s.toFixed(1)} s`} after submission; restarts ${o.restarts.join('/')} (total ${o.restarts.reduce((a, b) => a + b, 0)}); states ${o.states.join('/')}`;

async function main(): Promise<void> {
  console.log(`bench:live  (2 CPU slots, --interval-s ${interval}; least possible 40 s, target <= 60 s)`);
  console.log(`(a) 3 plain 20 s jobs:                  ${fmt(await plainJobs(false, false, 180))}`);
  console.log(`(b) same, kill -9 of the server at 6 s: ${fmt(await plainJobs(true, false, 180))}`);
  if (!values['skip-baseline']) {
    const limit_s = Number(values['baseline-limit-s']);
    console.log(
      `(c) baseline, preemptible + LAS without hysteresis (stopped at ${limit_s} s): ${fmt(await plainJobs(false, true, limit_s))}`,
    );
  }
  const sdk = await sdkJobs();
  console.log(`(d) 8 SDK jobs of unknown length:     ${fmt(sdk)}`);
  console.log(
    `    short jobs all done at ${sdk.last_short_s.toFixed(1)} s, first long job done at ${sdk.first_long_s.toFixed(1)} s`,
  );
}

await main();
