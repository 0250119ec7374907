/**
 * `goodput profile` through the report contract: steering a script by its report answers, an
 * output it cannot write, and the errors for a script that fails at once or does not import
 * goodput. The real-PyTorch runs read by `goodput plan` are in e2e-profile-plan.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packagePath } from '../util/package-root.js';
import { withTempDir } from '../../test-support/control/harness.js';
import { cli, PYTHON } from '../../test-support/profile/profile-cli.js';

/** `goodput profile FLAGS -- python3 fake_sdk.py`: a script that reports through the SDK's wire contract. */
const profileFakeSdk = (flags: string[], env: Record<string, string> = {}, onStderr?: (text: string) => void) =>
  cli(['profile', ...flags, '--', PYTHON, packagePath('test-support', 'profile', 'fake_sdk.py')], env, onStderr);

describe('goodput profile through the report contract', () => {
  it('steers a script through the sweep by its report answers and records its step times exactly', () =>
    withTempDir('goodput-profile-fake-', async (dir) => {
      const file = join(dir, 'fake.json');
      const ran = await profileFakeSdk(['--time-s', '60', '--out', file]);
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
    }));

  it('refuses an output it cannot write before measuring, and keeps a profile whose output broke during the sweep', () =>
    withTempDir('goodput-profile-out-', async (dir) => {
      const blocker = join(dir, 'blocker');
      writeFileSync(blocker, 'a file where a folder is needed');
      const t0 = Date.now();
      const refused = await profileFakeSdk(['--time-s', '60', '--out', join(blocker, 'p.json')]);
      assert.equal(refused.status, 1, refused.stderr);
      assert.match(
        refused.stderr,
        /E_OUTPUT.*cannot write the profile to .*blocker\/p\.json: .*blocker is not a directory; pass another --out/,
      );
      assert.doesNotMatch(refused.stderr, /profiling '/, 'refused before the sweep');
      assert.ok(Date.now() - t0 < 20_000);
      const refusedDir = await profileFakeSdk(['--data-dir', join(blocker, 'data')]);
      assert.equal(refusedDir.status, 1, refusedDir.stderr);
      assert.match(refusedDir.stderr, /E_DATA_DIR.*blocker is not a directory/);

      // The folder of --out becomes a file while the sweep runs: the measurements go to a file of their own.
      const folder = join(dir, 'out');
      let broken = false;
      const ran = await profileFakeSdk(
        ['--time-s', '60', '--out', join(folder, 'p.json')],
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
    }));

  it('says what the log shows went wrong when the script fails at once: here, a module its Python lacks', () =>
    withTempDir('goodput-profile-import-', async (dir) => {
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
    }));

  it('says a script that does not import goodput cannot be profiled, up front and in the error, without a stack trace', () =>
    withTempDir('goodput-profile-plain-', async (dir) => {
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
    }));
});
