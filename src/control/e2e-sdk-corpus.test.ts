/**
 * End to end with outside-style SDK scripts (test-support/corpus/): an AdaptDL-style CIFAR-like
 * script whose loaders run two worker processes, and a script whose loader keeps two persistent
 * workers, under a real `goodput up` on 2 CPU slots. The second job's arrival makes the policy
 * shrink the first by checkpoint-restart (and grow it back when the second ends): each stop
 * SIGTERMs replicas whose DataLoader workers are running. Every stop must end in exit 143 with
 * a checkpoint, every attempt resume at the step its predecessor checkpointed (no lost progress),
 * and both jobs succeed without failures. Skipped, saying why, without a Python that has torch.
 */
import { after, describe, it } from 'node:test';
import {
  cleanup,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { packagePath } from '../util/package-root.js';
import { noPython, pythonWith } from '../../test-support/control/python.js';
import { assertStopsKeptProgress } from '../../test-support/control/sdk-corpus.js';

const python = pythonWith(['torch']);
const skip = python ? undefined : noPython(['torch']);
const CIFAR = packagePath('test-support', 'corpus', 'adaptdl_style_cifar.py');
const PERSISTENT = packagePath('test-support', 'corpus', 'sdk_persistent_workers.py');

describe('outside-style SDK scripts with DataLoader workers, rescaled under goodput up', { skip }, () => {
  const data_dir = tempDataDir('goodput-sdk-corpus-');
  const servers: ServerProcess[] = [];
  after(() => cleanup(data_dir, servers));

  it(
    'stops with workers running exit 143, resume where they stopped, and both jobs succeed',
    { timeout: 300_000 },
    async () => {
      const server = await startServerProcess(data_dir, [
        '--cpu-slots',
        '2',
        '--interval-s',
        '1',
        '--grace-s',
        '30',
        '--policy',
        'optimus',
      ]);
      servers.push(server);
      const { client } = server;
      const workdir = packagePath();
      const cifar = await client.submit({
        name: 'cifar',
        command: [python!, CIFAR, '--epochs', '6', '--train-size', '3000'],
        workdir,
        max_replicas: 2,
      });
      await waitFor('cifar to train on 2 replicas', 90_000, async () => {
        const j = await client.getJob(cifar.id);
        return j.state === 'running' && j.replicas === 2 && j.step > 10;
      });
      const persistent = await client.submit({
        name: 'persistent',
        command: [python!, PERSISTENT, '--epochs', '6', '--samples', '16384'],
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
