/**
 * End to end against real Slurm daemons with real PyTorch (gloo on CPU): the outside-style SDK
 * scripts of test-support/corpus whose loaders run two worker processes (an AdaptDL-style
 * CIFAR-like script, and one with two persistent workers) under `goodput up --backend slurm` on
 * one node with 2 GPUs. The second job's arrival makes the policy shrink the first from 2
 * replicas to 1 by checkpoint-restart: the stop is Slurm's (`scancel --signal`, forwarded by the
 * task wrapper) and reaches replicas whose DataLoader workers run. Every stop must end in exit
 * 143 with a checkpoint, every attempt resume at the step its predecessor checkpointed, and both
 * jobs succeed without failures, as on the local backend (src/control/e2e-sdk-corpus.test.ts).
 * Skipped with a message when Slurm or a Python with torch is missing.
 */
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
import { assertStopsKeptProgress } from '../../../test-support/control/sdk-corpus.js';

const { python, skip } = pythonOnSlurm(['torch']);
const CIFAR = packagePath('test-support', 'corpus', 'adaptdl_style_cifar.py');
const PERSISTENT = packagePath('test-support', 'corpus', 'sdk_persistent_workers.py');

describe('outside-style SDK scripts with DataLoader workers, rescaled on Slurm', { skip }, () => {
  let cluster: SlurmCluster;
  let data_dir: string;
  const servers: ServerProcess[] = [];
  before(async () => {
    cluster = await startSlurmCluster({ nodes: 1, gpus_per_node: 2 });
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
    data_dir = tempDataDir('goodput-slurm-sdk-corpus-');
  });
  after(async () => {
    cleanup(data_dir, servers);
    await cluster?.stop();
  });

  it(
    'Slurm stops with workers running exit 143, resume where they stopped, and both jobs succeed',
    { timeout: 300_000 },
    async () => {
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
      await waitFor(
        '2 usable GPUs',
        30_000,
        async () => (await client.nodes()).reduce((k, n) => k + n.usable, 0) === 2,
      );
      const workdir = packagePath();
      // Epochs of 12000 images: the second job's arrival stops it by the end of its first epoch
      // (at steps 145 and 172 of 480 in two measured runs); 3 more epochs are the margin for a slow
      // stop under load (a quarter of this, 4 epochs of 3000, once ended before the shrink). 6
      // epochs only trained 2 more after it grew back.
      const cifar = await client.submit({
        name: 'cifar',
        command: [python!, CIFAR, '--epochs', '4', '--train-size', '12000'],
        workdir,
        max_replicas: 2,
      });
      await waitFor('cifar to train on 2 replicas', 120_000, async () => {
        const j = await client.getJob(cifar.id);
        return j.state === 'running' && j.replicas === 2 && j.step > 10;
      });
      const persistent = await client.submit({
        name: 'persistent',
        command: [python!, PERSISTENT, '--epochs', '4', '--samples', '16384'],
        workdir,
        max_replicas: 2,
      });
      const ids = [cifar.id, persistent.id];
      const done = await waitFor('both jobs to end', 240_000, async () => {
        const jobs = await Promise.all(ids.map((id) => client.getJob(id)));
        return jobs.every((j) => ['succeeded', 'failed', 'cancelled'].includes(j.state)) ? jobs : undefined;
      });
      await assertStopsKeptProgress(client, data_dir, done);
    },
  );
});
