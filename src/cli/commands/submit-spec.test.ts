/**
 * A spec file and the command line complete each other (flags win): a file without a name takes
 * -J or the program's name, and a file without a command takes the one after '--'. Before, the
 * file was validated alone first, so `goodput submit -J run1 job.yaml` failed on the name the
 * flag was giving.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GoodputError } from '../../core/errors.js';
import { specFromFlags } from './submit.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-submit-spec-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const specError =
  (code: string, pattern: RegExp) =>
  (error: unknown): boolean =>
    error instanceof GoodputError && error.code === code && pattern.test(error.message);

describe('specFromFlags with a spec file', () => {
  it('names a job whose file has no name after -J, else after its program', () => {
    const nameless = file('nameless.yaml', 'command: [/usr/bin/python3, train.py]\nmax_replicas: 2\n');
    assert.equal(specFromFlags('submit', { name: 'run1' }, nameless, undefined).name, 'run1');
    const spec = specFromFlags('submit', {}, nameless, undefined);
    assert.equal(spec.name, 'python3');
    assert.equal(spec.max_replicas, 2);
  });

  it("runs the command after '--' in the environment of a file without a command", () => {
    const envOnly = file('env-only.yaml', 'env: {HF_HOME: /data/hf}\nmax_replicas: 4\n');
    const spec = specFromFlags('submit', {}, envOnly, ['python3', 'train.py']);
    assert.deepEqual(spec.command, ['python3', 'train.py']);
    assert.deepEqual(spec.env, { HF_HOME: '/data/hf' });
    assert.equal(spec.max_replicas, 4);
    assert.throws(
      () => specFromFlags('submit', {}, envOnly, undefined),
      specError('E_SPEC', /env-only\.yaml is invalid: command: missing .*or give the command after '--'/),
    );
  });

  it('refuses a file that is not a mapping of fields, saying what it is', () => {
    assert.throws(
      () => specFromFlags('submit', {}, file('list.yaml', '- python3\n- train.py\n'), undefined),
      specError('E_SPEC', /list\.yaml is invalid: expected a mapping of fields .*got a list/),
    );
    assert.throws(
      () => specFromFlags('submit', {}, file('empty.yaml', ''), undefined),
      specError('E_SPEC', /empty\.yaml is invalid: .*got an empty document/),
    );
    assert.throws(
      () => specFromFlags('submit', {}, file('string.yaml', 'python3 train.py\n'), undefined),
      specError('E_SPEC', /string\.yaml is invalid: .*got string/),
    );
  });

  it('still names every bad field of the file once completed', () => {
    assert.throws(
      () => specFromFlags('submit', {}, file('bad.yaml', 'command: python3 train.py\nmax_replica: 3\n'), undefined),
      specError('E_SPEC', /bad\.yaml is invalid: command: .*max_replica: unknown field/),
    );
  });
});

describe('specFromFlags with a torchrun command', () => {
  it("rewrites a spec file's torchrun command with the Python of its venv's torchrun (relative to the workdir) and takes -n from it", () => {
    const bin = join(dir, 'work', 'env', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'torchrun'), `#!${join(bin, 'python')}\n`, { mode: 0o755 });
    const spec = specFromFlags(
      'submit',
      {},
      file(
        'tr.yaml',
        'workdir: work\nvenv: env\ncommand: [torchrun, --nnodes=1, --nproc-per-node=2, t.py, --lr, "0.1"]\n',
      ),
      undefined,
    );
    assert.deepEqual(spec.command, [join(bin, 'python'), 't.py', '--lr', '0.1']);
    assert.equal(spec.max_replicas, 2);
    assert.throws(
      () =>
        specFromFlags(
          'submit',
          { 'max-replicas': '3' },
          file('tr.yaml', 'workdir: work\nvenv: env\ncommand: [torchrun, --nproc_per_node, "2", t.py]\n'),
          undefined,
        ),
      specError('E_USAGE', /-n 3 disagrees with the launcher's 2 rank\(s\)/),
    );
  });
});

describe('specFromFlags with a file that is not a spec', () => {
  it("says where the YAML breaks, but never sends a binary file's control bytes to the terminal", () => {
    // Control bytes on the very line the parser quotes back.
    const binary = file('bin.json', '\x01\x02key\x1b[2J: [1, 2\n  bad: : :\n');
    assert.throws(
      () => specFromFlags('submit', {}, binary, undefined),
      (error: unknown) => {
        assert.ok(error instanceof GoodputError && error.code === 'E_SPEC');
        assert.match(error.message, /bin\.json: not valid YAML\/JSON: /);
        assert.doesNotMatch(error.message, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/); // eslint-disable-line no-control-regex
        assert.ok(error.message.length < 800, `${error.message.length} characters`);
        return true;
      },
    );
    assert.throws(
      () => specFromFlags('submit', {}, file('broken.yaml', 'command: [python3, t.py\n  bad: : :\n'), undefined),
      specError('E_SPEC', /broken\.yaml: not valid YAML\/JSON: .* at line 1, column \d+:\n\ncommand: \[python3, t\.py/),
    );
  });
});
