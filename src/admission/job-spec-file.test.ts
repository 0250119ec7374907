import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { packagePath } from '../util/package-root.js';
import { readJobSpecFile, validateJobSpec } from './job-spec-file.js';
import { jobToken, jobTokenClaim, verifyJobToken } from '../control/tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-spec-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('job spec', () => {
  it('applies defaults', () => {
    const spec = validateJobSpec({ name: 'mnist', command: ['python', 'train.py'] }, '/work');
    // preemptible stays absent: stopped only once stopping it loses nothing (docs/contract.md).
    assert.deepEqual(spec, {
      name: 'mnist',
      command: ['python', 'train.py'],
      workdir: '/work',
      env: {},
      min_replicas: 0,
      max_replicas: 1,
      max_restarts: 3,
      priority: 0,
    });
    assert.equal(
      validateJobSpec({ name: 'm', command: ['x'], preemptible: true }, '/work').preemptible,
      true,
      'an explicit true is kept',
    );
  });

  it('names every bad field', () => {
    try {
      validateJobSpec(
        {
          name: '',
          command: 'python train.py',
          max_replicas: 2,
          min_replicas: 5,
          workdir: 'rel',
          fixed_batch_size: 0,
          env: { GOODPUT_TOKEN: 'x', 'BAD-NAME': 'y' },
          extra: 1,
        },
        '/',
      );
      assert.fail('should throw');
    } catch (error) {
      assert.ok(error instanceof GoodputError);
      assert.equal(error.code, 'E_SPEC');
      for (const f of [
        'name:',
        'command:',
        'fixed_batch_size:',
        'env.GOODPUT_TOKEN:',
        'env.BAD-NAME:',
        'extra: unknown field',
      ])
        assert.ok(error.message.includes(f), `${f} in ${error.message}`);
    }
    assert.throws(
      () => validateJobSpec({ name: 'a', command: ['x'], max_replicas: 2, min_replicas: 5 }, '/'),
      /min_replicas: must be <= max_replicas \(2\)/,
    );
    assert.throws(
      () => validateJobSpec({ name: 'a', command: ['x'], workdir: 'rel' }, '/'),
      /workdir: must be an absolute path/,
    );
  });

  it('says how to write what users get wrong: a misspelt field, a command as one string, unquoted env values in YAML', () => {
    assert.throws(
      () => validateJobSpec({ name: 'a', command: ['x'], max_replica: 2, frobnicate: 1 }, '/'),
      /max_replica: unknown field \(did you mean 'max_replicas'\?\); frobnicate: unknown field$/,
    );
    assert.throws(
      () => validateJobSpec({ name: 'a', command: 'python3 train.py --lr 0.1' }, '/'),
      /command: must be a list of arguments, e\.g\. command: \["python3", "train\.py", "--lr", "0\.1"\]; it never goes through a shell/,
    );
    assert.throws(
      () => validateJobSpec({ name: 'a', command: 3 }, '/'),
      /command: Invalid input: expected array/,
      'other wrong types keep the plain message',
    );
    const yaml = join(dir, 'env.yaml');
    writeFileSync(
      yaml,
      'name: e\ncommand: [python3, t.py]\nenv:\n  OMP_NUM_THREADS: 4\n  VERSION: 1.10\n  DEBUG: true\n  OK: "1.10"\n',
    );
    assert.throws(
      () => readJobSpecFile(yaml, dir),
      (error: Error) => {
        assert.match(
          error.message,
          /env\.OMP_NUM_THREADS: must be a string \(in YAML, quote it: an unquoted number is read as a number, 1\.10 as 1\.1\); env\.VERSION: must be a string .*; env\.DEBUG: must be a string \(in YAML, quote it: an unquoted true or false is read as a boolean\)$/,
        );
        return true;
      },
    );
  });

  it("explains a reserved variable (which, why, what to use) and lets the SDK's own options through", () => {
    const refused = (env: Record<string, string>): string => {
      try {
        validateJobSpec({ name: 'a', command: ['x'], env }, '/');
      } catch (error) {
        return (error as Error).message;
      }
      return assert.fail(`${JSON.stringify(env)} accepted`);
    };
    // The SDK reads GOODPUT_SHARE_DIR (docs/migrating-from-adaptdl.md) and goodput never sets it.
    assert.equal(
      validateJobSpec({ name: 'a', command: ['x'], env: { GOODPUT_SHARE_DIR: '/data/s', GOODPUT_STEP_LOG: 'x' } }, '/')
        .env.GOODPUT_SHARE_DIR,
      '/data/s',
    );
    const checkpoint = refused({ GOODPUT_CHECKPOINT_DIR: '/c' });
    assert.doesNotMatch(checkpoint, /Invalid key in record/);
    assert.match(
      checkpoint,
      /env\.GOODPUT_CHECKPOINT_DIR: reserved: goodput sets it for each attempt: the job.s checkpoint directory.*gt\.share_path\(\)/,
    );
    assert.match(refused({ MASTER_PORT: '1' }), /env\.MASTER_PORT: reserved: .*free port.*init_method="env:\/\/"/);
    assert.match(refused({ CUDA_VISIBLE_DEVICES: '0' }), /env\.CUDA_VISIBLE_DEVICES: reserved: .*goodput up --gpus/);
    assert.match(
      refused({ GOODPUT_FOO: '1' }),
      /env\.GOODPUT_FOO: reserved: GOODPUT_\* names are goodput's .*GOODPUT_SHARE_DIR/,
    );
    assert.match(refused({ '1X': '1' }), /env\.1X: invalid variable name/);
    // False friends: names that only look reserved.
    assert.deepEqual(
      Object.keys(
        validateJobSpec({ name: 'a', command: ['x'], env: { MY_RANK: '1', GOODPUT: '1', XGOODPUT_TOKEN: '1' } }, '/')
          .env,
      ),
      ['MY_RANK', 'GOODPUT', 'XGOODPUT_TOKEN'],
    );
  });

  it('reads YAML and JSON files; a relative workdir is relative to the file', () => {
    const yaml = join(dir, 'job.yaml');
    writeFileSync(yaml, 'name: y\ncommand: [python, "-c", "print(1); echo $(id)"]\nworkdir: sub\nmax_replicas: 4\n');
    const spec = readJobSpecFile(yaml, '/elsewhere');
    assert.deepEqual(spec.command, ['python', '-c', 'print(1); echo $(id)']);
    assert.equal(spec.workdir, join(dir, 'sub'));
    const json = join(dir, 'job.json');
    writeFileSync(json, JSON.stringify({ name: 'j', command: ['x'], priority: 3 }));
    assert.equal(readJobSpecFile(json, dir).priority, 3);
    writeFileSync(join(dir, 'broken.yaml'), 'name: [unclosed');
    assert.throws(() => readJobSpecFile(join(dir, 'broken.yaml'), dir), /E_SPEC|not valid YAML/);
    assert.throws(() => readJobSpecFile(join(dir, 'missing.yaml'), dir), /cannot read job spec/);
  });
});

describe('job environment fields', () => {
  it('resolves a relative venv or conda prefix against the workdir and refuses both at once', () => {
    const spec = validateJobSpec(
      { name: 'a', command: ['python3'], workdir: '/w', venv: '.venv', env_setup: 'make venv' },
      '/cwd',
    );
    assert.equal(spec.venv, '/w/.venv');
    assert.equal(spec.env_setup, 'make venv');
    assert.equal(validateJobSpec({ name: 'a', command: ['x'], conda: '/opt/env' }, '/cwd').conda, '/opt/env');
    assert.equal('venv' in validateJobSpec({ name: 'a', command: ['x'] }, '/cwd'), false);
    assert.throws(
      () => validateJobSpec({ name: 'a', command: ['x'], venv: '/a', conda: '/b' }, '/cwd'),
      /conda: cannot be combined with venv/,
    );
  });

  it('reads examples/digits/job.yaml: workdir from the file, venv from the workdir, a setup step', () => {
    const spec = readJobSpecFile(packagePath('examples', 'digits', 'job.yaml'), '/elsewhere');
    assert.equal(spec.workdir, packagePath());
    assert.equal(spec.venv, packagePath('.venv'));
    assert.match(spec.env_setup!, /\/usr\/bin\/python3 -m venv --system-site-packages \.venv/);
    assert.deepEqual(spec.command.slice(0, 2), ['python3', 'examples/digits/train.py']);
  });
});

describe('job tokens', () => {
  it('are bound to one job and one secret', () => {
    const t = jobToken('s1', 'abc123');
    assert.equal(jobTokenClaim(t), 'abc123');
    assert.equal(verifyJobToken('s1', 'abc123', t), true);
    assert.equal(verifyJobToken('s1', 'abc124', t), false);
    assert.equal(verifyJobToken('s2', 'abc123', t), false);
    assert.equal(jobTokenClaim('gpu_xyz'), undefined);
  });
});
