/**
 * End to end against real Slurm daemons with two GPU types: gp1 has 4 `gpu:a100`, gp2 4
 * `gpu:t4` (typed GRES, fake devices; testing/slurm-cluster.ts). The goodput policy decides with
 * its typed form (docs/heterogeneous.md, "Live"): a job that could use 8 GPUs runs on one type
 * only, and a job whose steps are 8 times slower on t4 (the synthetic trainer's
 * --type-slowdown, read from GOODPUT_GPU_TYPE) moves from t4 to a100 once a100 GPUs free up.
 * Other Slurm jobs ("foreign" work) hold a node's GPUs to steer where jobs can start.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  sleep,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../../test-support/control/harness.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';

const skip = slurmMissing();
describe('goodput up --backend slurm on two GPU types (a100, t4)', { skip }, () => {
  let cluster: SlurmCluster;
  let server: ServerProcess;
  const data_dir = tempDataDir('goodput-slurm-types-');
  before(async () => {
    cluster = await startSlurmCluster({ gpu_types: ['a100', 't4'] });
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

  /** Each replica writes its environment, then trains (8x slower per step on t4). */
  const trainer = (samples: number) => [
    'sh',
    '-c',
    `env > "$GOODPUT_CHECKPOINT_DIR/env-$GOODPUT_ATTEMPT-$RANK"; exec "${process.execPath}" "${TRAINER}" --samples ${samples} --time-scale 0.5 --type-slowdown t4=8`,
    'trainer',
  ];
  const envs = (id: string) => {
    const dir = join(data_dir, 'jobs', id, 'checkpoint');
    return readdirSync(dir)
      .filter((f) => f.startsWith('env-'))
      .map((f) =>
        Object.fromEntries(
          readFileSync(join(dir, f), 'utf8')
            .split('\n')
            .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
        ),
      );
  };
  /** Holds every GPU of `node` with a Slurm job Goodput did not launch; resolves with its id once the inventory shows it. */
  const hold = async (node: string, type: string): Promise<string> => {
    const out = await cluster.cmd('sbatch', [
      '--parsable',
      '-N1',
      '-w',
      node,
      `--gres=gpu:${type}:4`,
      '-J',
      `foreign-${type}`,
      '-o',
      '/dev/null',
      '--wrap',
      'sleep 600',
    ]);
    await waitFor(
      `${node} to be held by other work`,
      30_000,
      async () => (await server.client.nodes()).find((n) => n.name === node)?.usable === 0,
    );
    return out.trim().split(';')[0]!;
  };
  const release = async (id: string, node: string) => {
    await cluster.cmd('scancel', [id]);
    await waitFor(
      `${node} to be free`,
      60_000,
      async () => (await server.client.nodes()).find((n) => n.name === node)?.usable === 4,
    );
  };

  it(
    'lists each node with its GRES type; a job that could use 8 GPUs runs on one type only',
    { timeout: 180_000 },
    async () => {
      const nodes = await server.client.nodes();
      assert.deepEqual(
        nodes.map((n) => [n.name, n.gpu_types, n.devices.map((d) => d.type)]),
        [
          ['gp1', ['a100'], ['a100', 'a100', 'a100', 'a100']],
          ['gp2', ['t4'], ['t4', 't4', 't4', 't4']],
        ],
      );
      const text = await runCli(['nodes', '--data-dir', data_dir]);
      assert.match(text.stdout, /GPU types: a100 \(4\), t4 \(4\); a job runs on one type/);

      const job = await server.client.submit({
        name: 'wide',
        command: trainer(5_000_000),
        workdir: data_dir,
        max_replicas: 8,
        profile: 'wide',
      });
      await waitFor('the job to run and report', 90_000, async () => {
        const j = await server.client.getJob(job.id);
        return j.state === 'running' && j.step > 3;
      });
      const placements: string[][] = [];
      for (let t = 0; t < 40; t++) {
        const j = await server.client.getJob(job.id);
        const live = j.current_replicas.filter((r) => r.exit_code === null).map((r) => r.node);
        if (live.length > 0) placements.push(live);
        await sleep(500);
      }
      assert.ok(placements.length > 0);
      for (const p of placements)
        assert.equal(new Set(p).size, 1, `replicas on two nodes of two types: ${p.join(',')}`);
      for (const e of envs(job.id))
        assert.equal(
          e.GOODPUT_GPU_TYPE,
          e.SLURMD_NODENAME === 'gp1' ? 'a100' : 't4',
          'each replica is told the GRES type of its node',
        );
      const shown = await runCli(['show', job.id, '--data-dir', data_dir, '--json']);
      assert.match(
        (JSON.parse(shown.stdout) as { gpu_type: string }).gpu_type,
        /^(a100|t4)$/,
        'show --json carries the type',
      );
      await server.client.cancel(job.id);
      await waitFor('the job to end', 60_000, async () =>
        ['cancelled', 'succeeded', 'failed'].includes((await server.client.getJob(job.id)).state),
      );
      await waitFor('the cluster to be idle', 60_000, async () => (await cluster.cmd('squeue', ['-h'])).trim() === '');
    },
  );

  it(
    'a job 8x slower on t4 starts there while a100 is held, and moves to a100 once it frees up',
    { timeout: 300_000 },
    async () => {
      // The key's profile on a100 comes from a first job that could only run there.
      const t4 = await hold('gp2', 't4');
      const first = await server.client.submit({
        name: 'first',
        command: trainer(30_000),
        workdir: data_dir,
        max_replicas: 1,
        profile: 'typed-k',
      });
      await waitFor(
        'the first job to succeed',
        120_000,
        async () => (await server.client.getJob(first.id)).state === 'succeeded',
      );
      assert.deepEqual([...new Set(envs(first.id).map((e) => e.GOODPUT_GPU_TYPE))], ['a100']);
      await waitFor("the key's profile on a100", 30_000, async () =>
        (await server.client.profiles()).some(
          (p) => p.key === 'typed-k' && p.gpu_type === 'a100' && p.throughput.length > 0,
        ),
      );
      const a100 = await hold('gp1', 'a100');
      await release(t4, 'gp2');

      const job = await server.client.submit({
        name: 'mover',
        command: trainer(50_000_000),
        workdir: data_dir,
        max_replicas: 1,
        profile: 'typed-k',
      });
      await waitFor('the job to run on t4 and fit its model there', 120_000, async () => {
        const j = await server.client.getJob(job.id);
        return j.state === 'running' && j.gpu_type === 't4' && j.perf !== null && j.step > 10;
      });
      await release(a100, 'gp1');
      const moved = await waitFor('the job to run on a100', 120_000, async () => {
        const j = await server.client.getJob(job.id);
        return j.state === 'running' && j.gpu_type === 'a100' ? j : undefined;
      });
      assert.ok(moved.restarts >= 1);
      const events = await server.client.events(job.id);
      assert.ok(
        events.some((e) => /moved from t4 to a100/.test(e.reason)),
        JSON.stringify(events.map((e) => e.reason)),
      );
      // Its attempts ran on t4, then a100, and each was told so.
      await waitFor('the a100 attempt to start its replica', 60_000, async () =>
        envs(job.id).some((e) => e.GOODPUT_GPU_TYPE === 'a100'),
      );
      for (const e of envs(job.id)) assert.equal(e.GOODPUT_GPU_TYPE, e.SLURMD_NODENAME === 'gp1' ? 'a100' : 't4');
      assert.ok(envs(job.id).some((e) => e.GOODPUT_GPU_TYPE === 't4'));
      await server.client.cancel(job.id);
    },
  );
});
