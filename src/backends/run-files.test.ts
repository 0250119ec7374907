/**
 * On Slurm as the job's owner (--run-as-owner) run/ belongs to the owner and the root server reads
 * the exit files there: it must read a plain file only. A link would hand the owner the first
 * number of a root-only file as their job's exit code; a FIFO would block the server for good.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readExitFile, runFileBase } from './run-files.js';

describe('readExitFile', () => {
  const job_dir = mkdtempSync(join(tmpdir(), 'goodput-run-files-'));
  mkdirSync(join(job_dir, 'run'));
  after(() => rmSync(job_dir, { recursive: true, force: true }));

  it('reads the code of a plain file; nothing while there is none', () => {
    assert.equal(readExitFile(job_dir, 0, 0), undefined);
    writeFileSync(runFileBase(job_dir, 0, 0) + '.exit', '143\n');
    assert.equal(readExitFile(job_dir, 0, 0), 143);
  });

  it('never follows a symbolic link', () => {
    const secret = join(job_dir, 'root-only');
    writeFileSync(secret, '4711\n', { mode: 0o600 });
    symlinkSync(secret, runFileBase(job_dir, 1, 0) + '.exit');
    assert.equal(readExitFile(job_dir, 1, 0), undefined);
  });

  it('never blocks on a FIFO', () => {
    execFileSync('mkfifo', [runFileBase(job_dir, 2, 0) + '.exit']);
    assert.equal(readExitFile(job_dir, 2, 0), undefined);
  });
});
