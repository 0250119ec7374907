/**
 * `goodput profile` on the real examples (Debian's /usr/bin/python3 with torch, CPU slots) and
 * `goodput plan` reading what it stored: a profile file, the data directory's store, and a
 * profile interrupted with SIGINT.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDataDir } from '../../test-support/control/harness.js';
import { closedPort, cli, CNN, DIGITS, PYTHON, skip, type PlanJson } from '../../test-support/profile/profile-cli.js';

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
