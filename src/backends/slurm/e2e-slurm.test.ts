/**
 * End to end against real Slurm daemons (slurmctld + 2 slurmd, 4 fake GPUs each, on this host):
 * `goodput up --backend slurm`, the inventory, an 8-rank job across both nodes, and what up and
 * launch refuse. Outages and outside actions are in e2e-slurm-recovery.test.ts. Skipped with a
 * message when Slurm is not installed (CI installs slurm-wlm, scripts/test-packages.txt).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../../test-support/control/harness.js';
import { SlurmBackend } from './slurm-backend.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';

/** Dumps the contract's variables, then meets every rank over TCP at MASTER_ADDR:MASTER_PORT. */
const RENDEZVOUS = `const fs = require('fs'); const net = require('net'); const e = process.env;
const rank = Number(e.RANK), world = Number(e.WORLD_SIZE);
const keep = Object.fromEntries(Object.entries(e).filter(([k]) => /^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|CUDA_VISIBLE_DEVICES|SLURMD_NODENAME)$|^GOODPUT_/.test(k)));
fs.writeFileSync(e.GOODPUT_CHECKPOINT_DIR + '/env-' + rank + '.json', JSON.stringify(keep));
if (rank === 0) {
  let met = 0;
  const server = net.createServer((s) => s.on('data', () => { if (++met === world - 1) { fs.writeFileSync(e.GOODPUT_CHECKPOINT_DIR + '/met', String(met)); s.end(); server.close(); } else s.end(); }));
  server.listen(Number(e.MASTER_PORT), e.MASTER_ADDR);
  if (world === 1) { fs.writeFileSync(e.GOODPUT_CHECKPOINT_DIR + '/met', '0'); server.close(); }
} else {
  const attempt = () => { const s = net.connect(Number(e.MASTER_PORT), e.MASTER_ADDR, () => s.end(String(rank))); s.on('error', () => setTimeout(attempt, 200)); };
  attempt();
}`;

const skip = slurmMissing();
describe('goodput up --backend slurm (real slurmctld and slurmd)', { skip }, () => {
  let cluster: SlurmCluster;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  before(async () => {
    cluster = await startSlurmCluster();
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
  });
  after(async () => {
    for (const d of dirs) cleanup(d, servers);
    await cluster?.stop();
  });

  it(
    'lists 8 GPUs on 2 nodes; an 8-rank job spans both with the contract environment and a reachable MASTER_ADDR',
    { timeout: 180_000 },
    async () => {
      const data_dir = tempDataDir('goodput-slurm-e2e-');
      dirs.push(data_dir);
      const server = await startServerProcess(data_dir, [
        '--backend',
        'slurm',
        '--partition',
        cluster.partition,
        '--interval-s',
        '2',
        '--grace-s',
        '10',
        '--policy',
        'fifo',
      ]);
      servers.push(server);
      const nodes = await runCli(['nodes', '--data-dir', data_dir, '--json']);
      assert.equal(nodes.status, 0, nodes.stderr);
      const list = JSON.parse(nodes.stdout) as { name: string; devices: { kind: string }[] }[];
      assert.deepEqual(
        list.map((n) => [n.name, n.devices.length, n.devices.every((d) => d.kind === 'gpu')]),
        [
          ['gp1', 4, true],
          ['gp2', 4, true],
        ],
      );
      const text = await runCli(['nodes', '--data-dir', data_dir]);
      assert.match(text.stdout, /8 device\(s\) on 2 node\(s\)/);
      assert.match(
        readFileSync(join(data_dir, 'up.log'), 'utf8'),
        /is readable on node\(s\) gp1,gp2/,
        'the shared-directory probe ran on both nodes',
      );

      const job = await server.client.submit({
        name: 'eight',
        command: [process.execPath, '-e', RENDEZVOUS],
        workdir: data_dir,
        min_replicas: 8,
        max_replicas: 8,
        max_restarts: 0,
      });
      const done = await waitFor('the 8-rank job to end', 120_000, async () => {
        const j = await server.client.getJob(job.id);
        return j.state === 'succeeded' || j.state === 'failed' ? j : undefined;
      });
      const ckpt = join(data_dir, 'jobs', job.id, 'checkpoint');
      assert.equal(done.state, 'succeeded', JSON.stringify(await server.client.events(job.id)));
      assert.equal(readFileSync(join(ckpt, 'met'), 'utf8'), '7', 'ranks 1-7 reached rank 0 at MASTER_ADDR:MASTER_PORT');
      const envs = Array.from(
        { length: 8 },
        (_, r) => JSON.parse(readFileSync(join(ckpt, `env-${r}.json`), 'utf8')) as Record<string, string>,
      );
      assert.deepEqual(
        envs.map((e) => e.RANK),
        ['0', '1', '2', '3', '4', '5', '6', '7'],
      );
      assert.ok(
        envs.every(
          (e) =>
            e.WORLD_SIZE === '8' &&
            e.GOODPUT_NUM_NODES === '2' &&
            e.LOCAL_WORLD_SIZE === '4' &&
            e.MASTER_ADDR === '127.0.0.1',
        ),
      );
      assert.equal(new Set(envs.map((e) => e.MASTER_PORT)).size, 1);
      assert.deepEqual(
        envs.map((e) => e.SLURMD_NODENAME),
        ['gp1', 'gp1', 'gp1', 'gp1', 'gp2', 'gp2', 'gp2', 'gp2'],
      );
      assert.deepEqual(
        envs.map((e) => e.LOCAL_RANK),
        ['0', '1', '2', '3', '0', '1', '2', '3'],
      );
      assert.deepEqual(
        envs.map((e) => e.CUDA_VISIBLE_DEVICES),
        Array(8).fill('0,1,2,3'),
        "each rank sees its node's GPUs of the job, its own at LOCAL_RANK (as torchrun's workers)",
      );
      const logs = await runCli(['logs', job.id, '--data-dir', data_dir, '--replica', '7']);
      assert.match(logs.stdout, /rank 7\/8, node gp2/);
    },
  );

  it(
    'up refuses a partition the cluster does not have, naming those it has (E_SLURM_PARTITION)',
    { timeout: 60_000 },
    async () => {
      const data_dir = tempDataDir('goodput-slurm-partition-');
      dirs.push(data_dir);
      const r = await runCli([
        'up',
        '--data-dir',
        data_dir,
        '--port',
        '0',
        '--backend',
        'slurm',
        '--partition',
        'nosuch',
      ]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(
        r.stderr,
        /error\[E_SLURM_PARTITION\]: Slurm has no partition 'nosuch' \(its partitions: gpu\); pass one of them with --partition/,
      );
    },
  );

  it("an sbatch rejection fails the launch with Slurm's reason (E_LAUNCH)", { timeout: 60_000 }, async () => {
    const b = new SlurmBackend({ name_prefix: 'goodput-reject', env: cluster.env });
    await b.refresh();
    const dir = tempDataDir('goodput-slurm-reject-');
    dirs.push(dir);
    // Five tasks with one GPU each on a node that has four: Slurm refuses at submission.
    const request = {
      job_id: 'j',
      attempt: 0,
      command: ['true'],
      workdir: dir,
      env: {},
      devices: [0, 1, 2, 3, 4],
      nodes: [0, 0, 0, 0, 0],
      num_nodes: 1,
      api_url: '',
      token: '',
      job_dir: join(dir, 'j'),
    };
    await assert.rejects(
      b.launch(request),
      (e: unknown) =>
        (e as { code?: string }).code === 'E_LAUNCH' &&
        /sbatch rejected the job: .*Requested node configuration is not available/.test((e as Error).message),
    );
    b.close();
  });
});
