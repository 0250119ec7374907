/**
 * The job environment through the local backend with real processes: a real venv made from
 * Debian's python3 (torch through --system-site-packages) beats a torch-less python3 first on
 * PATH; a conda-style prefix; env_setup once per job and node across replicas and attempts; a
 * failed setup and a missing environment give clear exits.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { LaunchRequest, ReplicaExit } from './backend.js';
import { EXIT_NO_ENVIRONMENT, execPlan, type JobEnvironment } from './job-env.js';
import { cpuSlots } from './local/devices.js';
import { jobDirs, LocalBackend } from './local/local-backend.js';
import { killOwnGroup } from '../../test-support/control/harness.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-jobenv-'));
const backend = new LocalBackend({ devices: cpuSlots(2), poll_ms: 50 });
const pids: number[] = [];
const keepAlive = setInterval(() => {}, 1000);
after(() => {
  clearInterval(keepAlive);
  for (const pid of pids) killOwnGroup(pid, root);
  backend.close();
  rmSync(root, { recursive: true, force: true });
});

const exits = new Map<string, (e: ReplicaExit) => void>();
backend.onExit((e) => exits.get(`${e.job_id}/${e.attempt}/${e.rank}`)?.(e));

/** A directory holding a `python3` that has no torch, put first on PATH. */
const fakeBin = join(root, 'fake-bin');
mkdirSync(fakeBin);
writeFileSync(join(fakeBin, 'python3'), '#!/bin/sh\necho "not this python3" >&2\nexit 42\n');
chmodSync(join(fakeBin, 'python3'), 0o755);

/** Launches one attempt and resolves with each replica's exit code and log. */
async function attempt(
  job: string,
  n: number,
  command: string[],
  environment: JobEnvironment,
  world = 1,
): Promise<{ codes: number[]; logs: string[] }> {
  const job_dir = join(root, job);
  const req: LaunchRequest = {
    job_id: job,
    attempt: n,
    command,
    workdir: root,
    env: { PATH: `${fakeBin}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    environment,
    devices: Array.from({ length: world }, (_, r) => r),
    nodes: Array.from({ length: world }, () => 0),
    num_nodes: 1,
    api_url: 'http://127.0.0.1:1',
    token: 't',
    job_dir,
  };
  const done = Array.from(
    { length: world },
    (_, rank) => new Promise<ReplicaExit>((r) => exits.set(`${job}/${n}/${rank}`, r)),
  );
  (await backend.launch(req)).forEach((r) => pids.push(r.pid));
  const codes = (await Promise.all(done)).map((e) => e.exit_code);
  const logs = codes.map((_, rank) => readFileSync(join(jobDirs(job_dir).logs, `replica-${rank}.log`), 'utf8'));
  return { codes, logs };
}

describe('job environment (backends/job-env.ts) under the local backend', () => {
  it('leaves a job without environment fields exactly as given', () => {
    const plan = execPlan({}, ['python3', 'a b'], { PATH: '/bin', X: '1' }, { state_dir: '/s', attempt: 0 });
    assert.deepEqual(plan, { command: ['python3', 'a b'], env: { PATH: '/bin', X: '1' } });
  });

  it(
    "runs python3 from a real venv of Debian's python3 (torch importable), not the first python3 on PATH",
    { timeout: 120_000 },
    async () => {
      const venv = join(root, 'venv');
      // Without pip: the test runs the venv's python3, and ensurepip's install took minutes of I/O
      // wait on a loaded machine (2m40s wall for 4 s of CPU here, against 2 s without it).
      const args = ['-m', 'venv', '--without-pip', '--system-site-packages', venv];
      const made = spawnSync('/usr/bin/python3', args, { encoding: 'utf8' });
      assert.equal(made.status, 0, `/usr/bin/python3 -m venv failed: ${made.stderr}`);
      const bare = await attempt('bare', 0, ['python3', '-c', 'print(1)'], {});
      assert.deepEqual(bare.codes, [42], 'without the venv the fake python3 runs: the test can fail');
      const script =
        'import os, sys, torch; print("prefix=" + sys.prefix, "venv=" + os.environ["VIRTUAL_ENV"], "torch=" + torch.__version__)';
      const r = await attempt('venv', 0, ['python3', '-c', script], { venv });
      assert.deepEqual(r.codes, [0], r.logs[0]);
      assert.match(r.logs[0]!, new RegExp(`prefix=${venv} venv=${venv} torch=\\d`));
    },
  );

  it('puts a conda prefix first on PATH with CONDA_PREFIX', async () => {
    const prefix = join(root, 'conda-env');
    mkdirSync(join(prefix, 'bin'), { recursive: true });
    writeFileSync(join(prefix, 'bin', 'python3'), '#!/bin/sh\necho "conda python3 CONDA_PREFIX=$CONDA_PREFIX"\n');
    chmodSync(join(prefix, 'bin', 'python3'), 0o755);
    const r = await attempt('conda', 0, ['python3'], { conda: prefix });
    assert.deepEqual(r.codes, [0], r.logs[0]);
    assert.match(r.logs[0]!, new RegExp(`conda python3 CONDA_PREFIX=${prefix}`));
  });

  it(
    'runs env_setup once per job and node, before any replica starts, across replicas and attempts',
    { timeout: 60_000 },
    async () => {
      const counter = join(root, 'setup-runs');
      const env_setup = `sleep 0.5; echo ran >> ${counter}; mkdir -p made/bin`;
      const command = ['/bin/sh', '-c', 'test -d made/bin && echo "started after setup"'];
      const first = await attempt('setup', 0, command, { env_setup }, 2);
      assert.deepEqual(first.codes, [0, 0], first.logs.join('\n'));
      for (const log of first.logs) assert.match(log, /started after setup/);
      const second = await attempt('setup', 1, command, { env_setup }, 2);
      assert.deepEqual(second.codes, [0, 0], second.logs.join('\n'));
      assert.equal(readFileSync(counter, 'utf8'), 'ran\n', 'one setup for 2 replicas x 2 attempts');
    },
  );

  it(
    'a failed env_setup fails every replica with its status; the next attempt tries it again',
    { timeout: 60_000 },
    async () => {
      const flag = join(root, 'setup-may-succeed');
      const env_setup = `echo "setting up"; test -e ${flag} || exit 3`;
      const failed = await attempt('setup-fails', 0, ['/bin/true'], { env_setup }, 2);
      assert.deepEqual(failed.codes, [3, 3]);
      assert.match(failed.logs.join('\n'), /goodput: env_setup failed on \S+ with exit status 3/);
      writeFileSync(flag, '');
      const retried = await attempt('setup-fails', 1, ['/bin/true'], { env_setup }, 2);
      assert.deepEqual(retried.codes, [0, 0], retried.logs.join('\n'));
    },
  );

  it('a venv that does not exist ends the replica with 127 and says how to make one', async () => {
    const venv = join(root, 'no-such-venv');
    const r = await attempt('missing', 0, ['python3', '-c', 'print(1)'], { venv });
    assert.deepEqual(r.codes, [EXIT_NO_ENVIRONMENT]);
    assert.match(
      r.logs[0]!,
      new RegExp(`venv ${venv} does not exist here .*python3 -m venv --system-site-packages ${venv}`),
    );
  });
});
