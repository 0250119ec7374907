import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { unwrapLauncherCommand } from './torchrun-python.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-torchrun-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A torchrun launcher script in `dir`/bin whose first line names `python`. */
function torchrunIn(dir: string, python: string): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const path = join(dir, 'bin', 'torchrun');
  writeFileSync(path, `#!${python}\nimport sys\n`);
  chmodSync(path, 0o755);
  return join(dir, 'bin');
}

describe('unwrapLauncherCommand', () => {
  it("runs the workers with the Python of the job's environment: the venv's torchrun, else its python, else PATH's torchrun", () => {
    const onPath = torchrunIn(join(root, 'system'), '/usr/bin/python3.11');
    torchrunIn(join(root, 'venv'), join(root, 'venv', 'bin', 'python'));
    const saved = process.env.PATH;
    process.env.PATH = `${onPath}:${saved ?? ''}`;
    try {
      assert.deepEqual(unwrapLauncherCommand('submit', ['torchrun', 'train.py'], undefined)?.command, [
        '/usr/bin/python3.11',
        'train.py',
      ]);
      assert.deepEqual(unwrapLauncherCommand('submit', ['torchrun', 'train.py'], join(root, 'venv'))?.command, [
        join(root, 'venv', 'bin', 'python'),
        'train.py',
      ]);
      // A venv made with --system-site-packages has a python but no torchrun of its own.
      const bare = join(root, 'bare-venv', 'bin');
      mkdirSync(bare, { recursive: true });
      writeFileSync(join(bare, 'python3'), '', { mode: 0o755 });
      assert.deepEqual(unwrapLauncherCommand('submit', ['torchrun', 'train.py'], join(root, 'bare-venv'))?.command, [
        join(bare, 'python3'),
        'train.py',
      ]);
      // A torchrun named by path is read where it is.
      assert.deepEqual(
        unwrapLauncherCommand('submit', [join(root, 'venv', 'bin', 'torchrun'), 'train.py'], undefined)?.command,
        [join(root, 'venv', 'bin', 'python'), 'train.py'],
      );
    } finally {
      process.env.PATH = saved;
    }
  });

  it('is a usage error saying what to run when torchrun cannot be read, and leaves other commands alone', () => {
    const saved = process.env.PATH;
    process.env.PATH = join(root, 'nowhere');
    try {
      assert.throws(
        () => unwrapLauncherCommand('run', ['torchrun', '--nproc_per_node', '2', 'train.py'], undefined),
        (error: unknown) => {
          assert.ok(error instanceof GoodputError && error.code === 'E_USAGE');
          assert.match(
            error.message,
            /run: cannot tell which Python torchrun runs .* give the script's own command with -n for the ranks, e\.g\. `goodput run -n 2 -- PYTHON train\.py`/,
          );
          return true;
        },
      );
      assert.equal(unwrapLauncherCommand('run', ['python3', 'train.py'], undefined), undefined);
    } finally {
      process.env.PATH = saved;
    }
  });
});
