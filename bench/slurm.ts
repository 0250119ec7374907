/**
 * `npm run bench:slurm`: latency of the Slurm backend on the local test cluster (slurmctld + 2
 * slurmd, 4 fake GPUs each, started here; needs root and slurm-wlm). Prints, per repetition
 * and as medians:
 * - launch: from the policy's decision (the job's `assigned` event) to every rank's program
 *   running (the task wrapper's `.pid` files), for an 8-rank job across both nodes;
 * - rescale: from the decision to rescale (the `rescale` event) 4 -> 8 replicas to every rank
 *   of the new attempt running (checkpoint on SIGTERM, Slurm job end, sbatch, start);
 * - baseline: a bare `sbatch` of the same 8-task layout, submission to every task running
 *   (the floor Slurm itself sets on this machine).
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { GoodputClient } from '../src/client/client.js';
import {
  cleanup,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../test-support/control/harness.js';
import { slurmMissing, startSlurmCluster } from '../src/backends/slurm/testing/slurm-cluster.js';
import { benchArgs } from './bench-args.js';

benchArgs(
  `
usage: npm run bench:slurm
Latency of the Slurm backend on a local test cluster (needs root and slurm-wlm).
`,
  {},
);

const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);

/** Latest mtime (ms) of the `.pid` files of one attempt once `count` exist, else undefined. */
function ranksRunning_ms(run: string, attempt: number, count: number): number | undefined {
  if (!existsSync(run)) return undefined;
  const files = readdirSync(run).filter((f) => f.startsWith(`attempt-${attempt}-rank-`) && f.endsWith('.pid'));
  return files.length === count ? Math.max(...files.map((f) => statSync(join(run, f)).mtimeMs)) : undefined;
}

async function eventAt(client: GoodputClient, job: string, kind: string, nth = 0): Promise<number> {
  const e = (await client.events(job)).filter((x) => x.kind === kind)[nth];
  if (!e) throw new Error(`no ${kind} event`);
  return Date.parse(e.at);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const missing = slurmMissing();
  if (missing) {
    console.log(`bench:slurm skipped: ${missing}`);
    return;
  }
  const cluster = await startSlurmCluster();
  process.env.SLURM_CONF = cluster.env.SLURM_CONF;
  const data_dir = tempDataDir('goodput-bench-slurm-');
  const servers: ServerProcess[] = [];
  const launch: number[] = [];
  const rescale: number[] = [];
  const baseline: number[] = [];
  /**
   * Per rescale: decision -> last old rank's exit recorded, -> new attempt recorded as launched
   * (once Slurm lists its job past PENDING: sbatch plus Slurm's own wait), -> all new ranks running.
   */
  const parts: [number, number, number][] = [];
  try {
    const server = await startServerProcess(data_dir, [
      '--backend',
      'slurm',
      '--interval-s',
      '1',
      '--grace-s',
      '30',
      '--policy',
      'optimus',
    ]);
    servers.push(server);
    const { client } = server;
    for (let i = 0; i < REPEAT; i++) {
      // Baseline: the same layout submitted straight to Slurm.
      const out = join(data_dir, `baseline-${i}`);
      mkdirSync(out);
      const t0 = Date.now();
      await cluster.cmd('sbatch', [
        '-N2',
        '--ntasks-per-node=4',
        '--gpus-per-task=1',
        '-o',
        '/dev/null',
        '--wrap',
        `srun sh -c 'touch ${out}/$SLURM_PROCID; sleep 2'`,
      ]);
      const t1 = await waitFor('the baseline tasks', 60_000, async () =>
        readdirSync(out).length === 8
          ? Math.max(...readdirSync(out).map((f) => statSync(join(out, f)).mtimeMs))
          : undefined,
      );
      baseline.push(t1 - t0);
      await waitFor('the baseline job to end', 60_000, async () => (await cluster.cmd('squeue', ['-h'])).trim() === '');

      // Launch: 8 ranks across both nodes.
      const a = await client.submit({
        name: `launch-${i}`,
        command: [process.execPath, TRAINER, '--samples', '100000000'],
        workdir: data_dir,
        min_replicas: 8,
        max_replicas: 8,
      });
      const run = join(data_dir, 'jobs', a.id, 'run');
      const ranAt = await waitFor('8 ranks to run', 120_000, async () => ranksRunning_ms(run, 0, 8));
      launch.push(ranAt - (await eventAt(client, a.id, 'assigned')));
      await client.cancel(a.id);
      await waitFor('the Slurm job to end', 60_000, async () => (await cluster.cmd('squeue', ['-h'])).trim() === '');

      // Rescale 4 -> 8: a foreign job holds gp2, then leaves.
      const foreign = (
        await cluster.cmd('sbatch', [
          '--parsable',
          '-w',
          'gp2',
          '--gres=gpu:4',
          '-o',
          '/dev/null',
          '--wrap',
          'sleep 600',
        ])
      ).trim();
      await waitFor(
        'Goodput to see gp2 taken',
        30_000,
        async () => (await client.nodes()).find((n) => n.name === 'gp2')?.usable === 0,
      );
      const b = await client.submit({
        name: `rescale-${i}`,
        command: [process.execPath, TRAINER, '--samples', '100000000'],
        workdir: data_dir,
        max_replicas: 8,
      });
      const brun = join(data_dir, 'jobs', b.id, 'run');
      await waitFor('4 ranks to run', 120_000, async () => ranksRunning_ms(brun, 0, 4));
      await cluster.cmd('scancel', [foreign]);
      const grownAt = await waitFor('8 ranks of the next attempt to run', 180_000, async () =>
        ranksRunning_ms(brun, 1, 8),
      );
      const decided = await eventAt(client, b.id, 'rescale');
      rescale.push(grownAt - decided);
      const events = await client.events(b.id);
      const lastExit = Math.max(...events.filter((e) => e.kind === 'replica-exited').map((e) => Date.parse(e.at)));
      const submitted = await eventAt(client, b.id, 'launched', 1);
      parts.push([lastExit - decided, submitted - lastExit, grownAt - submitted]);
      await client.cancel(b.id);
      await waitFor('the Slurm job to end', 60_000, async () => (await cluster.cmd('squeue', ['-h'])).trim() === '');
      const [stop, gap, start] = parts[i]!;
      console.log(
        `run ${i + 1}/${REPEAT}: launch ${fmt(launch[i]!)}, rescale 4->8 ${fmt(rescale[i]!)} (stop ${fmt(stop)} + relaunch until Slurm starts the job ${fmt(gap)} + ranks start ${fmt(start)}), bare sbatch baseline ${fmt(baseline[i]!)}`,
      );
    }
    console.log(`\nSlurm backend on the local test cluster (2 nodes x 4 fake GPUs, ${REPEAT} runs, medians):`);
    console.log(`  policy decision -> all 8 ranks running:      ${fmt(median(launch))}`);
    console.log(`  one rescale 4 -> 8 (decision -> all running): ${fmt(median(rescale))}`);
    console.log(`  baseline: bare sbatch -> all 8 tasks running: ${fmt(median(baseline))}`);
  } finally {
    cleanup(data_dir, servers);
    await cluster.stop();
  }
}

await main();
