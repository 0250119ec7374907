/**
 * End to end against real Slurm daemons with one node of two GRES types (`Gres=gpu:a100:2,
 * gpu:t4:2`, fake devices; testing/slurm-cluster.ts): the node is two typed groups, and while
 * other Slurm work holds its a100 GPUs, a job that could use all four runs on its two t4 GPUs,
 * which Slurm gives it because its batch script asks for that type (`--gres=gpu:t4:N`).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../../test-support/control/harness.js';
import { parseSqueue } from './inventory.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';

const skip = slurmMissing();
describe('goodput up --backend slurm on a node of two GRES types (gpu:a100:2,gpu:t4:2)', { skip }, () => {
  let cluster: SlurmCluster;
  let server: ServerProcess;
  const data_dir = tempDataDir('goodput-slurm-mixed-');
  before(async () => {
    cluster = await startSlurmCluster({ nodes: 1, gpu_types: ['a100+t4'] });
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
    server = await startServerProcess(data_dir, [
      '--backend',
      'slurm',
      '--partition',
      cluster.partition,
      '--interval-s',
      '2',
      '--grace-s',
      '10',
      '--policy',
      'goodput',
    ]);
  });
  after(async () => {
    cleanup(data_dir, server ? [server] : []);
    await cluster?.stop();
  });

  it(
    'lists both types on the node; with its a100 GPUs held, a job runs on its t4 GPUs and Slurm gives it t4',
    { timeout: 180_000 },
    async () => {
      const nodes = await server.client.nodes();
      assert.deepEqual(
        nodes.map((n) => [n.name, n.gpu_types, n.devices.map((d) => d.type)]),
        [['gp1', ['a100', 't4'], ['a100', 'a100', 't4', 't4']]],
      );
      const text = await runCli(['nodes', '--data-dir', data_dir]);
      assert.match(text.stdout, /GPU types: a100 \(2\), t4 \(2\); a job runs on one type/);
      await cluster.cmd('sbatch', [
        '--parsable',
        '-N1',
        '-w',
        'gp1',
        '--gres=gpu:a100:2',
        '-J',
        'foreign-a100',
        '-o',
        '/dev/null',
        '--wrap',
        'sleep 600',
      ]);
      await waitFor(
        'the a100 GPUs to be held by other work',
        30_000,
        async () => (await server.client.nodes())[0]?.usable === 2,
      );

      const command = [
        'sh',
        '-c',
        `env > "$GOODPUT_CHECKPOINT_DIR/env-$GOODPUT_ATTEMPT-$RANK"; exec "${process.execPath}" "${TRAINER}" --samples 5000000 --time-scale 0.5`,
        'trainer',
      ];
      const job = await server.client.submit({
        name: 'mixed',
        command,
        workdir: data_dir,
        max_replicas: 4,
        profile: 'mixed',
      });
      await waitFor('the job to run and report', 90_000, async () => {
        const j = await server.client.getJob(job.id);
        return j.state === 'running' && j.step > 3;
      });
      const shown = await server.client.getJob(job.id);
      assert.equal(shown.gpu_type, 't4');
      assert.ok(
        shown.devices.every((d) => d >= 2),
        `on the t4 devices: ${shown.devices.join(',')}`,
      );
      // Slurm itself gave the job's Slurm job t4 GPUs.
      const ours = parseSqueue(await cluster.cmd('squeue', ['--json'])).filter(
        (j) => j.name.startsWith('goodput-') && j.state === 'RUNNING',
      );
      assert.ok(ours.length > 0);
      for (const j of ours) {
        assert.deepEqual(
          j.gpu_types_per_node.flat().map((t) => t.type),
          ['t4'],
          `Slurm job ${j.job_id}: ${JSON.stringify(j.gpu_types_per_node)}`,
        );
        // Because it asked for them: on a node of two types, untyped GPUs could be either.
        assert.match(
          await cluster.cmd('scontrol', ['write', 'batch_script', String(j.job_id), '-']),
          /--gres=gpu:t4:\d+$/m,
        );
      }
      const dir = join(data_dir, 'jobs', job.id, 'checkpoint');
      const envs = readdirSync(dir)
        .filter((f) => f.startsWith('env-'))
        .map((f) => readFileSync(join(dir, f), 'utf8'));
      assert.ok(envs.length > 0);
      for (const e of envs) assert.match(e, /^GOODPUT_GPU_TYPE=t4$/m);
      await server.client.cancel(job.id);
      await waitFor('the job to end', 60_000, async () =>
        ['cancelled', 'succeeded', 'failed'].includes((await server.client.getJob(job.id)).state),
      );
    },
  );
});
