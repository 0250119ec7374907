/**
 * End to end against real Slurm daemons with real PyTorch (gloo on CPU): the plain torchrun-style
 * DDP script of test-support/corpus, submitted with -n 2 while foreign Slurm jobs leave one GPU,
 * waits (with a `waiting` event) instead of starting smaller, then runs as 2 ranks on 2 GPUs with
 * torchrun's environment; declared resumable and stopped from outside (SIGTERM to its main
 * process on the node), it resumes from its snapshot with no epoch lost. Skipped with a message
 * when Slurm or a Python with torch is missing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../../test-support/control/harness.js';
import { packagePath } from '../../util/package-root.js';
import { startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';
import { pythonOnSlurm } from '../../../test-support/slurm/slurm-suite.js';

const { python, skip } = pythonOnSlurm(['torch']);
const corpus = packagePath('test-support', 'corpus');

describe('a plain DDP script on Slurm', { skip }, () => {
  let cluster: SlurmCluster;
  let data_dir: string;
  const servers: ServerProcess[] = [];
  before(async () => {
    cluster = await startSlurmCluster();
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
    data_dir = tempDataDir('goodput-slurm-corpus-');
  });
  after(async () => {
    cleanup(data_dir, servers);
    await cluster?.stop();
  });
  const log = (id: string, rank: number) => {
    try {
      return readFileSync(join(data_dir, 'jobs', id, 'logs', `replica-${rank}.log`), 'utf8');
    } catch {
      return '';
    }
  };
  const ended = async (client: ServerProcess['client'], id: string) => {
    const j = await client.getJob(id);
    return ['succeeded', 'failed', 'cancelled'].includes(j.state) ? j : undefined;
  };

  it(
    '-n 2 waits for 2 GPUs, runs 2 ranks; --resumable resumes from its snapshot after a stop',
    { timeout: 600_000 },
    async () => {
      const hold = async (node: string, gpus: number) =>
        (
          await cluster.cmd('sbatch', [
            '--parsable',
            '-w',
            node,
            `--gres=gpu:${gpus}`,
            '-J',
            'foreign',
            '-o',
            '/dev/null',
            '--wrap',
            'sleep 900',
          ])
        ).trim();
      const f1 = await hold('gp1', 3);
      const f2 = await hold('gp2', 4);
      const server = await startServerProcess(data_dir, ['--backend', 'slurm', '--interval-s', '2', '--grace-s', '20']);
      servers.push(server);
      const { client } = server;
      await waitFor(
        'only 1 usable GPU',
        30_000,
        async () => (await client.nodes()).reduce((k, n) => k + n.usable, 0) === 1,
      );
      const ddp = await client.submit({
        name: 'ddp',
        workdir: corpus,
        max_replicas: 2,
        command: [python!, 'ddp_snapshot.py', '--epochs', '3', '--snapshot', join(data_dir, 'ddp.pt')],
      });
      const wait = await waitFor('the gang to say why it waits', 60_000, async () =>
        (await client.events(ddp.id)).find((e) => e.kind === 'waiting'),
      );
      assert.match(wait.reason, /waiting for 2 GPU\(s\) at once/);
      assert.equal((await client.getJob(ddp.id)).state, 'queued');
      await cluster.cmd('scancel', [f1]);
      const done = await waitFor('the DDP job to end', 240_000, () => ended(client, ddp.id));
      assert.equal(done.state, 'succeeded', log(ddp.id, 0).slice(-3000));
      for (const rank of [0, 1])
        assert.match(
          log(ddp.id, rank),
          new RegExp(`\\[rank ${rank}\\] started: world 2, local rank ${rank}, group rank 0, OMP_NUM_THREADS 1`),
        );
      assert.equal((await client.events(ddp.id)).filter((e) => e.kind === 'launched').length, 1);

      const job = await client.submit({
        name: 'ddp-resumable',
        workdir: corpus,
        max_replicas: 2,
        resumable: true,
        command: [
          python!,
          'ddp_snapshot.py',
          '--epochs',
          '8',
          '--epoch-sleep-s',
          '0.5',
          '--snapshot',
          join(data_dir, 'resumable.pt'),
        ],
      });
      await waitFor('three epochs', 180_000, async () => /epoch 2 done/.test(log(job.id, 0)));
      // A stop of the task from outside the script (an operator's signal on the node): the main process only.
      const main = Number(
        readFileSync(join(data_dir, 'jobs', job.id, 'run', 'attempt-0-rank-0.pid'), 'utf8')
          .trim()
          .split(' ')[1],
      );
      process.kill(main, 'SIGTERM');
      const finished = await waitFor('the resumable job to end', 300_000, () => ended(client, job.id));
      const text = log(job.id, 0);
      assert.equal(finished.state, 'succeeded', text.slice(-3000));
      const [before, rest] = text.split(/resuming from snapshot at epoch /);
      assert.ok(rest !== undefined, `rank 0 resumed from its snapshot:\n${text.slice(-3000)}`);
      const lastBefore = Math.max(...[...before!.matchAll(/epoch (\d+) done/g)].map((m) => Number(m[1])));
      assert.ok(Number(/^\d+/.exec(rest)![0]) >= lastBefore + 1, 'no epoch lost');
      await cluster.cmd('scancel', [f2]);
    },
  );
});
