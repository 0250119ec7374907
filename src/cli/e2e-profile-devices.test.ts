/**
 * `goodput profile` and `goodput run` beside a running `goodput up` on the same machine: a GPU
 * held by one of its jobs is refused when chosen and left out on 'auto' (a profile would measure
 * the contention, and both may not fit in memory), a free one is used, and CPU slots get a
 * warning. The machine's two GPUs are a recorded
 * `nvidia-smi` output first on PATH (test-support/control/nvidia-smi-captures.ts); the job is a
 * real trainer process and the profiled script speaks the report contract (no GPU is touched).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { fakeNvidiaSmi, queryOutput } from '../../test-support/control/nvidia-smi-captures.js';
import { packagePath } from '../util/package-root.js';

const data_dir = tempDataDir('goodput-profile-devices-');
const bin = mkdtempSync(join(tmpdir(), 'goodput-smi-'));
const servers: ServerProcess[] = [];
after(() => {
  cleanup(data_dir, servers);
  rmSync(bin, { recursive: true, force: true });
});

describe('goodput profile beside a running server', () => {
  it(
    'refuses a GPU a job holds, naming a free one, and uses the free one; goodput run leaves it out',
    { timeout: 120_000 },
    async () => {
      fakeNvidiaSmi(bin, queryOutput(['h100', 'h100']));
      const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
      const server = await startServerProcess(data_dir, ['--interval-s', '1', '--grace-s', '2'], env);
      servers.push(server);
      const job = await server.client.submit({
        name: 'busy',
        command: [process.execPath, TRAINER, '--samples', '100000000', '--time-scale', '1'],
        workdir: data_dir,
        max_replicas: 1,
      });
      const held = await waitFor('the job to hold a GPU', 30_000, async () => {
        const j = await server.client.getJob(job.id);
        return j.state === 'running' && j.devices.length === 1 ? j.devices[0] : undefined;
      });
      const free = 1 - held;
      const script = packagePath('test-support', 'profile', 'fake_sdk.py');

      const refused = await runCli(
        [
          'profile',
          '--data-dir',
          data_dir,
          '--gpus',
          `${held},`,
          '--time-s',
          '30',
          '--out',
          join(data_dir, 'p.json'),
          '--',
          '/usr/bin/python3',
          script,
        ],
        env,
      );
      assert.equal(refused.status, 1, refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(
          `E_DEVICES.*GPU ${held} \\(job ${job.id}\\) is in use by the goodput server at .*Pass --gpus ${free}, \\(free now\\)`,
        ),
      );
      assert.doesNotMatch(refused.stderr, /profiling '/, 'refused before anything ran');

      const used = await runCli(
        [
          'profile',
          '--data-dir',
          data_dir,
          '--gpus',
          `${free},`,
          '--time-s',
          '20',
          '--out',
          join(data_dir, 'p.json'),
          '--',
          '/usr/bin/python3',
          script,
        ],
        env,
      );
      assert.equal(used.status, 0, used.stderr);
      assert.match(used.stderr, /profile of 'fake_sdk'/);

      const cpu = await runCli(
        [
          'profile',
          '--data-dir',
          data_dir,
          '--cpu-slots',
          '1',
          '--time-s',
          '20',
          '--out',
          join(data_dir, 'c.json'),
          '--',
          '/usr/bin/python3',
          script,
        ],
        env,
      );
      assert.equal(cpu.status, 0, cpu.stderr);
      assert.match(
        cpu.stderr,
        /warning: the goodput server at .* runs jobs on 1 device\(s\) of this machine: they share its CPUs, and step times will be slower for it/,
      );

      // goodput run with its own server: on 'auto' it leaves the held GPU to the job that has it.
      const run = await runCli(
        [
          'run',
          '--interval-s',
          '1',
          '--data-dir',
          join(data_dir, 'run'),
          '--',
          process.execPath,
          '-e',
          'console.log("visible " + process.env.CUDA_VISIBLE_DEVICES)',
        ],
        { ...env, GOODPUT_DATA_DIR: data_dir },
      );
      assert.equal(run.status, 0, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(`GPU\\(s\\) ${held} are in use by jobs of the goodput server at .*: using ${free}`),
      );
      assert.match(run.stdout, new RegExp(`^visible ${free}$`, 'm'));
      const runHeld = await runCli(
        ['run', '--gpus', `${held},`, '--data-dir', join(data_dir, 'run'), '--', process.execPath, '-e', '0'],
        { ...env, GOODPUT_DATA_DIR: data_dir },
      );
      assert.equal(runHeld.status, 1);
      assert.match(runHeld.stderr, /E_DEVICES/);
      await server.client.cancel(job.id);
    },
  );
});

describe('goodput profile on a machine of two GPU types', () => {
  it(
    'profiles the type with the most GPUs on auto and names how to profile the other; refuses a choice that mixes them',
    { timeout: 120_000 },
    async () => {
      const mixedBin = mkdtempSync(join(tmpdir(), 'goodput-smi-mixed-'));
      const dir = tempDataDir('goodput-profile-mixed-');
      try {
        fakeNvidiaSmi(mixedBin, queryOutput(['l40s', 'h100', 'h100']));
        const env = { PATH: `${mixedBin}:${process.env.PATH ?? ''}` };
        const script = packagePath('test-support', 'profile', 'fake_sdk.py');
        const out = join(dir, 'p.json');
        const auto = await runCli(
          ['profile', '--data-dir', dir, '--time-s', '20', '--out', out, '--', '/usr/bin/python3', script],
          env,
        );
        assert.equal(auto.status, 0, auto.stderr);
        assert.match(
          auto.stderr,
          /this machine has GPUs of 2 types: profiling the 2 NVIDIA H100 80GB HBM3; profile the others in another run: NVIDIA L40S with --gpus 0,/,
        );
        assert.match(auto.stderr, /profiling 'fake_sdk' on 2 NVIDIA H100 80GB HBM3 device\(s\)/);
        const profile = JSON.parse(readFileSync(out, 'utf8')) as { devices: { gpu_type: string }[] };
        assert.deepEqual(
          profile.devices.map((d) => d.gpu_type),
          ['NVIDIA H100 80GB HBM3'],
        );
        const mixed = await runCli(
          [
            'profile',
            '--data-dir',
            dir,
            '--gpus',
            '0,1',
            '--time-s',
            '20',
            '--out',
            out,
            '--',
            '/usr/bin/python3',
            script,
          ],
          env,
        );
        assert.equal(mixed.status, 2, mixed.stderr);
        assert.match(
          mixed.stderr,
          /the GPUs chosen are of 2 types: NVIDIA L40S \(--gpus 0,\), NVIDIA H100 80GB HBM3 \(--gpus 1,\)\. A profile is per GPU type/,
        );
      } finally {
        rmSync(mixedBin, { recursive: true, force: true });
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
