/**
 * A data directory or output folder the user names may be impossible to use: a file in the way,
 * a path the kernel refuses (/proc), a read-only file system. Each must come back as a reason
 * (E_DATA_DIR at the CLI), not as an internal error, and never hang: Node's recursive mkdir
 * loops for ever on /proc/x.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { prepareOutput, writeOutputFile } from '../datadir/output-file.js';
import { makeDataDir } from '../datadir/secure.js';
import { directoryProblem } from './directory.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-dirs-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('directoryProblem / makeDataDir', () => {
  it('creates missing parents with the mode and leaves no probe file behind', () => {
    const dir = join(root, 'a', 'b', 'c');
    assert.equal(directoryProblem(dir, 0o700), undefined);
    assert.ok(statSync(dir).isDirectory());
    assert.equal(statSync(join(root, 'a')).mode & 0o777, 0o700 & ~process.umask());
    assert.equal(directoryProblem(dir, 0o700), undefined, 'an existing directory is fine');
    assert.deepEqual(existsSync(join(dir, `.goodput-write-test-${process.pid}`)), false);
  });

  it('names the file in the way', () => {
    const file = join(root, 'plain-file');
    writeFileSync(file, 'x');
    assert.equal(directoryProblem(join(file, 'd', 'e'), 0o700), `${file} is not a directory`);
    assert.equal(directoryProblem(file, 0o700), `${file} is not a directory`);
  });

  it(
    'returns the refusal of a path under /proc instead of looping',
    { skip: existsSync('/proc/self') ? false : 'no /proc' },
    () => {
      assert.match(directoryProblem('/proc/goodput-no-such/dir', 0o700) ?? '', /^\/proc\/goodput-no-such: /);
    },
  );

  it('makeDataDir throws E_DATA_DIR with the reason and what to do', () => {
    const file = join(root, 'another-file');
    writeFileSync(file, 'x');
    assert.throws(
      () => makeDataDir(join(file, 'data'), 0o700),
      (error: unknown) => {
        assert.ok(error instanceof GoodputError && error.code === 'E_DATA_DIR');
        assert.equal(
          error.message,
          `cannot use ${join(file, 'data')} as the data directory: ${file} is not a directory; pass another --data-dir or set GOODPUT_DATA_DIR`,
        );
        return true;
      },
    );
  });

  it('writeOutputFile makes the missing folder and writes; a file in the way is E_OUTPUT naming what and what to do', () => {
    const path = join(root, 'reports', 'deep', 'r.html');
    writeOutputFile(path, '<html>', 'the HTML report', 'pass another --html');
    assert.equal(readFileSync(path, 'utf8'), '<html>');
    const file = join(root, 'third-file');
    writeFileSync(file, 'x');
    assert.throws(
      () => prepareOutput(join(file, 'r.html'), 'the HTML report', 'pass another --html'),
      (error: unknown) => {
        assert.ok(error instanceof GoodputError && error.code === 'E_OUTPUT');
        assert.equal(
          error.message,
          `cannot write the HTML report to ${join(file, 'r.html')}: ${file} is not a directory; pass another --html`,
        );
        return true;
      },
    );
    assert.throws(
      () => writeOutputFile(join(root, 'reports'), 'x', 'the HTML report', 'pass another --html'),
      (error: unknown) => {
        assert.ok(error instanceof GoodputError && error.code === 'E_OUTPUT');
        assert.match(
          error.message,
          /^cannot write the HTML report to .*reports: EISDIR: illegal operation on a directory.*; pass another --html$/,
        );
        return true;
      },
    );
  });
});
