/**
 * `goodput profile --backend slurm` against real Slurm daemons (the test cluster: slurmctld and 2
 * slurmd with 4 fake GPUs each, on this host): the fake SDK script measured at 1 and 2 replicas as
 * Slurm jobs on one node, with the contract's variables and a report address the nodes reach;
 * the refusals when Slurm cannot serve the profile. Skipped with a message without Slurm or root.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI, tempDataDir, waitFor } from '../../../test-support/control/harness.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from '../../backends/slurm/testing/slurm-cluster.js';
import { packagePath } from '../../util/package-root.js';
import { PROFILE_JOB_ID } from './collector.js';
import { contractVariableNames } from '../../../test-support/profile/profile-cli.js';
import { writeDeadSlurmConf } from '../../backends/slurm/testing/dead-conf.js';

const SCRIPT = ['/usr/bin/python3', packagePath('test-support', 'profile', 'fake_sdk.py')];

/** Runs the CLI (up to 150 s: a sweep of Slurm jobs outlasts the harness's 30 s runCli). */
function cli(args: readonly string[], env: Record<string, string>): Promise<{ status: number; stderr: string }> {
  return new Promise((resolve) => {
    const options = { env: { ...process.env, ...env }, timeout: 150_000 };
    execFile(process.execPath, [CLI, ...args], options, (error, _stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr });
    });
  });
}

interface Points {
  devices: { gpu_type: string; points: { num_replicas: number; local_bsz: number; accum_step_time_s: number }[] }[];
}

const skip = slurmMissing();
describe('goodput profile --backend slurm (real slurmctld and slurmd)', { skip }, () => {
  let cluster: SlurmCluster;
  const dir = tempDataDir('goodput-profile-slurm-');
  before(async () => {
    cluster = await startSlurmCluster();
  });
  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const squeue = async (...args: string[]) => (await cluster.cmd('squeue', ['-h', ...args])).trim();

  const LONG = { timeout: 180_000 };
  it('runs each launch as a Slurm job on the node with the most free GPUs, reporting by host name', LONG, async () => {
    const data_dir = join(dir, 'data');
    const envDir = join(dir, 'env');
    mkdirSync(envDir);
    const out = join(dir, 'p.json');
    // Another user's job holds 3 of gp1's 4 GPUs: the sweep goes to gp2, the node with the most free.
    const hold = [
      '--parsable',
      '--nodelist=gp1',
      '--gres=gpu:3',
      '--ntasks=1',
      '-o',
      '/dev/null',
      '--wrap',
      'sleep 300',
    ];
    const foreign = (await cluster.cmd('sbatch', hold)).trim();
    await waitFor('it to run', 30_000, async () => (await squeue('-j', foreign, '-o', '%T')) === 'RUNNING');
    const args = ['--backend', 'slurm', '--partition', cluster.partition, '--gpus', '2', '--data-dir', data_dir];
    const env = { ...cluster.env, FAKE_SDK_ENV_DIR: envDir };
    const ran = await cli(['profile', ...args, '--time-s', '30', '--out', out, '--', ...SCRIPT], env);
    await cluster.cmd('scancel', [foreign]);
    assert.equal(ran.status, 0, ran.stderr);
    const chose = `slurm: profiling on node gp2 \\(2 of its 4 GPU\\(s\\)\\); replicas report to ${hostname()}`;
    assert.match(ran.stderr, new RegExp(chose));
    const device = (JSON.parse(readFileSync(out, 'utf8')) as Points).devices[0]!;
    assert.equal(device.gpu_type, 'fakegpu', 'the GRES type, as the server names a Slurm GPU');
    // The fake script's step takes 1 ms per sample: measured exactly at both replica counts.
    assert.deepEqual([...new Set(device.points.map((p) => p.num_replicas))], [1, 2], JSON.stringify(device.points));
    for (const p of device.points) assert.equal(+p.accum_step_time_s.toFixed(6), p.local_bsz / 1000);
    // The last launch's two ranks, as Slurm ran them: one Slurm job on gp2, the contract's variables.
    type Env = Record<string, string>;
    const envOf = (r: number) => JSON.parse(readFileSync(join(envDir, `rank-${r}.json`), 'utf8')) as Env;
    const ranks = [envOf(0), envOf(1)];
    const seen = ranks.map((e) => [e.RANK, e.WORLD_SIZE, e.SLURMD_NODENAME, e.GOODPUT_JOB_ID?.split('-')[0]]);
    assert.deepEqual(seen, [
      ['0', '2', 'gp2', PROFILE_JOB_ID],
      ['1', '2', 'gp2', PROFILE_JOB_ID],
    ]);
    assert.equal(ranks[0]!.GOODPUT_JOB_ID, ranks[1]!.GOODPUT_JOB_ID);
    assert.equal(ranks[0]!.SLURM_JOB_ID, ranks[1]!.SLURM_JOB_ID);
    assert.equal(new URL(ranks[0]!.GOODPUT_API!).hostname, hostname(), 'an address other nodes reach, not 127.0.0.1');
    const names = contractVariableNames('fakegpu');
    assert.deepEqual(
      names.filter((k) => ranks[0]![k] === undefined),
      [],
    );
    // Every launch was stopped with the contract's stop (the program's SIGTERM: exit 143, FAILED
    // to Slurm), not cancelled; its Slurm job ends once its batch step does (about 3 s after the ranks).
    const states = await waitFor("the profile's Slurm jobs to end", 30_000, async () => {
      const jobs = (await squeue('-t', 'all', '-o', '%j %T'))
        .split('\n')
        .filter((l) => /-profile-[0-9a-f]+-\d+ /.test(l));
      const active = jobs.some((l) => / (PENDING|RUNNING|CONFIGURING|COMPLETING)$/.test(l));
      return active ? undefined : jobs.map((l) => l.split(' ')[1]);
    });
    assert.deepEqual(states, ['FAILED', 'FAILED'], 'one Slurm job per launch (1, then 2 replicas), none cancelled');
    // The launches' folder (on the shared data directory) is removed after a sweep that succeeded.
    assert.deepEqual(readdirSync(join(data_dir, 'profile-runs')), []);
  });

  it('refuses, before measuring: a partition Slurm lacks, slurmctld down, no free GPU, --cpu-slots', LONG, async () => {
    const data_dir = join(dir, 'refused');
    const args = ['profile', '--backend', 'slurm', '--data-dir', data_dir, '--out', join(dir, 'x.json')];
    const wrong = await cli([...args, '--partition', 'nope', '--', ...SCRIPT], cluster.env);
    assert.equal(wrong.status, 1, wrong.stderr);
    const refusal =
      `error\\[E_SLURM_PARTITION\\]: Slurm has no partition 'nope' ` + `\\(its partitions: ${cluster.partition}\\)`;
    assert.match(wrong.stderr, new RegExp(refusal));
    const dead = join(dir, 'dead.conf');
    writeDeadSlurmConf(dead);
    const down = await cli([...args, '--', ...SCRIPT], { SLURM_CONF: dead });
    assert.equal(down.status, 1, down.stderr);
    assert.match(down.stderr, /error\[E_BACKEND_UNAVAILABLE\]: .*slurmctld.*'sinfo' works here/);
    // Other jobs hold every GPU of both nodes: nothing to profile on now, and each node says why.
    const hold = [
      '--parsable',
      '--nodes=2',
      '--ntasks-per-node=1',
      '--gres=gpu:4',
      '-o',
      '/dev/null',
      '--wrap',
      'sleep 300',
    ];
    const foreign = (await cluster.cmd('sbatch', hold)).trim();
    await waitFor('it to run', 30_000, async () => (await squeue('-j', foreign, '-o', '%T')) === 'RUNNING');
    const full = await cli([...args, '--', ...SCRIPT], cluster.env);
    await cluster.cmd('scancel', [foreign]);
    assert.equal(full.status, 1, full.stderr);
    assert.match(full.stderr, /E_DEVICES\]: no node of the cluster has a GPU Goodput may use now \(gp1: .*held/);
    for (const r of [wrong, down, full]) assert.doesNotMatch(r.stderr, /profiling '/, 'refused before anything ran');
    assert.ok(!existsSync(join(dir, 'x.json')));
    assert.deepEqual(readdirSync(join(data_dir, 'profile-runs')), [], 'no launch folder left behind');
    const cpu = await cli(['profile', '--backend', 'slurm', '--cpu-slots', '2', '--', ...SCRIPT], {});
    assert.equal(cpu.status, 2);
    assert.match(cpu.stderr, /--cpu-slots is for the local backend/);
    const host = await cli(['profile', '--host', '0.0.0.0', '--', ...SCRIPT], {});
    assert.equal(host.status, 2);
    assert.match(host.stderr, /--host needs --backend slurm/);
  });
});
