/**
 * `goodput profile` on the real examples (Debian's /usr/bin/python3 with torch, CPU slots) and
 * `goodput plan` reading what it stored: a profile file, the data directory's store, and a
 * profile interrupted with SIGINT.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { packagePath } from '../util/package-root.js';
import { CLI, tempDataDir } from '../../test-support/control/harness.js';

const PYTHON = '/usr/bin/python3';
const DIGITS = packagePath('examples', 'digits', 'train.py');
const CNN = packagePath('examples', 'cnn', 'train.py');

interface Ran {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `onStderr` may act on the child as stderr arrives. */
function cli(
  args: readonly string[],
  env: Record<string, string>,
  onStderr?: (text: string, kill: () => void) => void,
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr, () => child.kill('SIGINT'));
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

interface PlanJson {
  key: string;
  rows: {
    gpu_type: string;
    gpus: number;
    source: string;
    samples_per_s: number;
    time_s: number | null;
    cost: number | null;
    fits: boolean;
    time_interval_s: [number, number];
    memory_per_gpu_bytes: number | null;
    memory_note?: string;
  }[];
  answers: {
    fastest_within_budget: { gpus: number } | null;
    cheapest_within_deadline: { gpus: number } | null;
    knee: { gpu_type: string; gpus: number }[];
  };
  notes: string[];
}

/** A local port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const torch = spawnSync(PYTHON, ['-c', 'import torch, sklearn'], { encoding: 'utf8' });
const skip = torch.status !== 0 ? `no torch/sklearn in ${PYTHON}` : false;

describe('goodput profile through the report contract', () => {
  it('steers a script through the sweep by its report answers and records its step times exactly', async () => {
    const dir = tempDataDir('goodput-profile-fake-');
    try {
      const file = join(dir, 'fake.json');
      const ran = await cli(
        [
          'profile',
          '--time-s',
          '60',
          '--out',
          file,
          '--',
          PYTHON,
          packagePath('test-support', 'profile', 'fake_sdk.py'),
        ],
        {},
      );
      assert.equal(ran.status, 0, ran.stderr);
      const device = (
        JSON.parse(readFileSync(file, 'utf8')) as {
          devices: {
            points: { local_bsz: number; accum_step_time_s: number; optim_step_time_s: number }[];
            grad: unknown[];
          }[];
        }
      ).devices[0]!;
      // Local batches 8..64 spaced by 2; the 2-micro-step configuration at 8 gave way to the plain one.
      assert.deepEqual(
        device.points.map((p) => [p.local_bsz, +p.accum_step_time_s.toFixed(6), +p.optim_step_time_s.toFixed(6)]),
        [
          [8, 0.008, 0.008],
          [16, 0.016, 0.016],
          [32, 0.032, 0.032],
          [64, 0.064, 0.064],
        ],
      );
      assert.deepEqual(device.grad, [{ progress: 0, sqr: 1, var: 2 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an output it cannot write before measuring, and keeps a profile whose output broke during the sweep', async () => {
    const dir = tempDataDir('goodput-profile-out-');
    try {
      const blocker = join(dir, 'blocker');
      writeFileSync(blocker, 'a file where a folder is needed');
      const t0 = Date.now();
      const refused = await cli(
        [
          'profile',
          '--time-s',
          '60',
          '--out',
          join(blocker, 'p.json'),
          '--',
          PYTHON,
          packagePath('test-support', 'profile', 'fake_sdk.py'),
        ],
        {},
      );
      assert.equal(refused.status, 1, refused.stderr);
      assert.match(
        refused.stderr,
        /E_OUTPUT.*cannot write the profile to .*blocker\/p\.json: .*blocker is not a directory; pass another --out/,
      );
      assert.doesNotMatch(refused.stderr, /profiling '/, 'refused before the sweep');
      assert.ok(Date.now() - t0 < 20_000);
      const refusedDir = await cli(
        [
          'profile',
          '--data-dir',
          join(blocker, 'data'),
          '--',
          PYTHON,
          packagePath('test-support', 'profile', 'fake_sdk.py'),
        ],
        {},
      );
      assert.equal(refusedDir.status, 1, refusedDir.stderr);
      assert.match(refusedDir.stderr, /E_DATA_DIR.*blocker is not a directory/);

      // The folder of --out becomes a file while the sweep runs: the measurements go to a file of their own.
      const folder = join(dir, 'out');
      let broken = false;
      const ran = await cli(
        [
          'profile',
          '--time-s',
          '60',
          '--out',
          join(folder, 'p.json'),
          '--',
          PYTHON,
          packagePath('test-support', 'profile', 'fake_sdk.py'),
        ],
        { TMPDIR: dir },
        (stderr) => {
          if (broken || !stderr.includes("profiling '")) return;
          broken = true;
          rmSync(folder, { recursive: true, force: true });
          writeFileSync(folder, 'in the way');
        },
      );
      assert.ok(broken);
      assert.equal(ran.status, 1, ran.stderr);
      const rescue =
        /could not store the profile in .*out\/p\.json \(.*\); it is saved in (\S+\.json): 'goodput plan \S+' reads it/.exec(
          ran.stderr,
        )?.[1];
      assert.ok(rescue !== undefined && rescue.startsWith(dir), ran.stderr);
      const kept = JSON.parse(readFileSync(rescue, 'utf8')) as { kind: string; devices: { points: unknown[] }[] };
      assert.equal(kept.kind, 'goodput.profile');
      assert.equal(kept.devices[0]!.points.length, 4, 'every configuration measured is kept');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what the log shows went wrong when the script fails at once: here, a module its Python lacks', async () => {
    const dir = tempDataDir('goodput-profile-import-');
    try {
      const script = join(dir, 'train.py');
      writeFileSync(script, 'import goodput_no_such_module\nimport goodput.torch as gt\n');
      const ran = await cli(
        ['profile', '--time-s', '30', '--cpu-slots', '1', '--out', join(dir, 'p.json'), '--', PYTHON, script],
        {},
      );
      assert.equal(ran.status, 1, ran.stderr);
      assert.match(
        ran.stderr,
        /E_LAUNCH.*the script exited \(exit 1\) before its first report: the Python that ran it has no module 'goodput_no_such_module'/,
      );
      assert.doesNotMatch(ran.stderr, /is it an SDK script/, 'the log says why: no guess');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says a script that does not import goodput cannot be profiled, up front and in the error, without a stack trace', async () => {
    const dir = tempDataDir('goodput-profile-plain-');
    try {
      const script = join(dir, 'plain_train.py');
      writeFileSync(
        script,
        'import time\nfor epoch in range(2):\n    time.sleep(0.1)\n    print(f"epoch {epoch} done", flush=True)\n',
      );
      const ran = await cli(
        ['profile', '--time-s', '30', '--cpu-slots', '1', '--out', join(dir, 'p.json'), '--', PYTHON, script],
        {},
      );
      assert.equal(ran.status, 1, ran.stderr);
      assert.match(
        ran.stderr,
        /warning: .*plain_train\.py does not import goodput, and goodput profile measures only scripts that report through the SDK/,
      );
      assert.match(
        ran.stderr,
        /E_LAUNCH.*the script exited \(exit 0\) before its first report: .*plain_train\.py does not import goodput/,
      );
      assert.match(ran.stderr, /epoch 1 done/, 'the end of its log');
      assert.doesNotMatch(ran.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(existsSync(join(dir, 'p.json')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('goodput profile -> goodput plan (real PyTorch on CPU)', { skip }, () => {
  const dir = tempDataDir('goodput-profile-e2e-');
  const env = { GOODPUT_DATA_DIR: join(dir, 'default-data-dir') };
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('profiles the digits example into a file that plan reads', async () => {
    const file = join(dir, 'digits.json');
    const ran = await cli(['profile', '--time-s', '45', '--out', file, '--', PYTHON, DIGITS, '--epochs', '1000'], env);
    assert.equal(ran.status, 0, ran.stderr);
    assert.match(ran.stderr, /profile +\d+% 1 replica\(s\), local batch \d+/, 'progress on stderr');
    assert.match(ran.stderr, /note: cross-node synchronization not measured/);
    assert.match(
      ran.stderr,
      /note: only cpu measured: goodput plan transfers other types/,
      'the types not present are said',
    );
    const profile = JSON.parse(readFileSync(file, 'utf8')) as {
      key: string;
      complete: boolean;
      devices: {
        gpu_type: string;
        points: unknown[];
        grad: unknown[];
        memory?: { samples: unknown[]; per_sample_bytes: number };
        model_parameters?: number;
      }[];
    };
    assert.equal(profile.key, 'digits.train');
    assert.equal(profile.complete, true);
    const device = profile.devices[0]!;
    assert.equal(device.gpu_type, 'cpu');
    assert.ok(device.points.length >= 3, `several local batches measured: ${JSON.stringify(device.points)}`);
    assert.equal(device.grad.length, 1, 'gradient noise from the accumulation configuration');
    assert.ok((device.model_parameters ?? 0) > 1000);
    assert.ok(
      device.memory && device.memory.samples.length >= 2 && device.memory.per_sample_bytes >= 0,
      'resident memory per local batch',
    );

    const html = join(dir, 'plan.html');
    const plan = await cli(
      [
        'plan',
        file,
        '--json',
        '--gpus',
        '1,2,4,16',
        '--gpu-type',
        'cpu,A100-40GB',
        '--budget',
        '5',
        '--deadline',
        '1h',
        '--html',
        html,
      ],
      env,
    );
    assert.equal(plan.status, 0, plan.stderr);
    const json = JSON.parse(plan.stdout) as PlanJson;
    // One CPU slot measured: the CPU rows stop there (CPU slots are never extrapolated), and are not priced.
    assert.deepEqual(
      json.rows.map((r) => `${r.gpu_type}:${r.gpus}`),
      ['cpu:1', 'A100-40GB:1', 'A100-40GB:2', 'A100-40GB:4', 'A100-40GB:16'],
    );
    assert.equal(json.rows[0]!.source, 'measured');
    assert.equal(json.rows[0]!.cost, null);
    const gpuRows = json.rows.filter((r) => r.gpu_type === 'A100-40GB');
    assert.ok(gpuRows.every((r) => r.source === 'estimated'));
    assert.ok(gpuRows.every((r) => r.samples_per_s > 0 && r.time_s !== null && r.time_s > 0 && r.cost !== null));
    assert.ok(
      json.rows.every((r) => r.time_s !== null && r.time_interval_s[0] < r.time_s && r.time_s < r.time_interval_s[1]),
      'an 80% interval with every time',
    );
    assert.ok(
      gpuRows.every((r) => r.memory_per_gpu_bytes === null && /GPU memory unknown/.test(r.memory_note ?? '')),
      'no CPU memory passed off as GPU memory',
    );
    assert.ok(json.answers.fastest_within_budget && json.answers.cheapest_within_deadline);
    assert.deepEqual(
      json.answers.knee.map((k) => k.gpu_type),
      ['A100-40GB'],
      'no knee for the CPU slot: never a recommendation',
    );
    assert.ok(
      existsSync(html) && /<svg[\s\S]*<polyline/.test(readFileSync(html, 'utf8')),
      'a self-contained HTML chart',
    );
  });

  it('profiles the cnn example on 2 CPU slots into the data directory, and plan reads the key', async () => {
    const data_dir = join(dir, 'data');
    const ran = await cli(
      ['profile', '--cpu-slots', '2', '--time-s', '60', '--data-dir', data_dir, '--', PYTHON, CNN, '--epochs', '50'],
      env,
    );
    assert.equal(ran.status, 0, ran.stderr);
    assert.match(ran.stderr, /2 replica\(s\), local batch/);
    const plan = await cli(
      [
        'plan',
        'cnn.train',
        '--data-dir',
        data_dir,
        '--json',
        '--gpus',
        '1,2,8',
        '--gpu-type',
        'cpu,T4',
        '--epochs',
        '2',
        '--samples-per-epoch',
        '2000',
      ],
      env,
    );
    assert.equal(plan.status, 0, plan.stderr);
    const json = JSON.parse(plan.stdout) as PlanJson;
    assert.deepEqual(
      json.rows.map((r) => `${r.gpu_type}:${r.gpus}:${r.source}`),
      ['cpu:1:measured', 'cpu:2:measured', 'T4:1:estimated', 'T4:2:estimated', 'T4:8:estimated'],
    );
    assert.ok(
      json.notes.some((n) => n.startsWith('cross-node synchronization not measured')),
      "the profile's notes are kept beside the store",
    );
    assert.equal(
      statSync(join(data_dir, 'goodput.sqlite')).mode & 0o777,
      0o600,
      'the store is private, as the server makes it',
    );
    const text = await cli(['plan', 'cnn.train', '--data-dir', data_dir, '--gpus', '1,2', '--gpu-type', 'cpu'], env);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /cpu +2 +1 +measured/);
    assert.match(text.stdout, /knee/);

    // No server runs for this data directory (server.json left by one that was killed): goodput
    // profiles lists, shows and removes what goodput profile stored, straight from the store.
    writeFileSync(join(data_dir, 'server.json'), JSON.stringify({ url: `http://127.0.0.1:${await closedPort()}` }));
    const ls = await cli(['profiles', 'ls', '--data-dir', data_dir, '--json'], env);
    assert.equal(ls.status, 0, ls.stderr);
    assert.match(ls.stderr, /no server is running: using the store in .*data directly/);
    assert.deepEqual(
      (JSON.parse(ls.stdout) as { key: string; gpu_type: string; measured_replicas: number[] }[]).map((p) => [
        p.key,
        p.gpu_type,
        p.measured_replicas,
      ]),
      [['cnn.train', 'cpu', [1, 2]]],
    );
    const show = await cli(['profiles', 'show', 'cnn.train', '--data-dir', data_dir], env);
    assert.equal(show.status, 0, show.stderr);
    assert.match(show.stdout, /profile +'cnn.train' on cpu/);
    const missing = await cli(['profiles', 'show', 'other', '--data-dir', data_dir], env);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /E_NOT_FOUND.*no profile 'other'/);
    const rm = await cli(['profiles', 'rm', 'cnn.train', '--data-dir', data_dir], env);
    assert.equal(rm.status, 0, rm.stderr);
    assert.match(rm.stdout, /removed the profile of 'cnn.train' on cpu/);
    const gone = await cli(['plan', 'cnn.train', '--data-dir', data_dir], env);
    assert.equal(gone.status, 1);
    assert.match(gone.stderr, /E_NOT_FOUND/);
    // A server named explicitly is not replaced by the store: its error stands.
    const named = await cli(
      ['profiles', 'ls', '--data-dir', data_dir, '--server', `http://127.0.0.1:${await closedPort()}`],
      env,
    );
    assert.equal(named.status, 1);
    assert.match(named.stderr, /E_SERVER_DOWN/);
  });

  it('keeps a profile interrupted with SIGINT (exit 130), and plan reads it', async () => {
    const file = join(dir, 'interrupted.json');
    let sent = false;
    const ran = await cli(
      ['profile', '--time-s', '300', '--out', file, '--', PYTHON, DIGITS, '--epochs', '1000'],
      env,
      (stderr, kill) => {
        // Two configurations in: the second's line appears once the first was measured.
        if (!sent && (stderr.match(/1 replica\(s\), local batch/g) ?? []).length >= 3) {
          sent = true;
          kill();
        }
      },
    );
    assert.ok(sent, ran.stderr);
    assert.equal(ran.status, 130, ran.stderr);
    assert.match(ran.stderr, /partial profile of 'digits.train'/);
    const profile = JSON.parse(readFileSync(file, 'utf8')) as {
      complete: boolean;
      devices: { points: unknown[]; notes: string[] }[];
    };
    assert.equal(profile.complete, false);
    assert.ok(
      profile.devices[0]!.points.length >= 1 && profile.devices[0]!.points.length < 4,
      JSON.stringify(profile.devices[0]!.points),
    );
    assert.ok(profile.devices[0]!.notes.some((n) => n.startsWith('interrupted')));
    const plan = await cli(['plan', file, '--json', '--gpus', '1,2', '--gpu-type', 'cpu'], env);
    assert.equal(plan.status, 0, plan.stderr);
    const json = JSON.parse(plan.stdout) as PlanJson;
    assert.equal(json.rows[0]!.source, 'measured');
    assert.ok(json.notes.some((n) => n.includes('interrupted')));
  });
});
