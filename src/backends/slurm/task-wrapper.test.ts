/**
 * The Slurm task wrapper (batch-script.ts TASK_WRAPPER) run by /bin/sh without Slurm, in its own
 * process group as slurmstepd runs a task: a job cancel's SIGTERM to that group that lands while
 * the sweep lists the rank's processes (its `grep` killed mid-listing) still leaves no `setsid`
 * child behind. A `grep` on PATH that waits before listing holds the sweep open for the signal.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { markedProcesses, sweepMarked } from '../local/containment.js';
import { TASK_WRAPPER } from './batch-script.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-task-wrapper-'));
const job_id = `wrapper-${process.pid}`;
after(() => {
  sweepMarked(job_id, 0); // a failing run must not leave its sleep behind
  rmSync(root, { recursive: true, force: true });
});

const until = async (what: string, ok: () => boolean, limit_ms = 20_000): Promise<void> => {
  for (const t0 = Date.now(); !ok(); await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() - t0 > limit_ms) throw new Error(`timed out waiting for ${what}`);
};

describe('Slurm task wrapper', () => {
  it("sweeps a setsid child even when a cancel's SIGTERM cuts its first listing short", async () => {
    const run = join(root, 'run');
    const logs = join(root, 'logs');
    const bin = join(root, 'bin');
    for (const d of [run, logs, bin]) mkdirSync(d);
    // The listing grep (-l) says it started, then waits before it lists: the test signals then.
    const started = join(root, 'listing');
    writeFileSync(
      join(bin, 'grep'),
      `#!/bin/sh\ncase "$1" in -l*) : > '${started}'; sleep 1 ;; esac\nexec /bin/grep "$@"\n`,
    );
    chmodSync(join(bin, 'grep'), 0o755);
    const program = 'setsid sleep 3174 </dev/null >/dev/null 2>&1 & exec sleep 600';
    const wrapper = spawn(
      '/bin/sh',
      ['-c', TASK_WRAPPER, 'goodput-replica', run, logs, root, '/bin/sh', '-c', program],
      {
        detached: true, // its own process group, as a Slurm task's
        stdio: 'ignore',
        env: {
          PATH: `${bin}:/usr/bin:/bin`,
          SLURM_PROCID: '0',
          SLURMD_NODENAME: 'here',
          GOODPUT_JOB_ID: job_id,
          GOODPUT_ATTEMPT: '0',
          GOODPUT_RANKS: 'RANK WORLD_SIZE',
          GOODPUT_RANKS_RANK: '0',
          GOODPUT_RANKS_WORLD_SIZE: '1',
        },
      },
    );
    const ended = new Promise<void>((resolve) => wrapper.on('exit', () => resolve()));
    const base = join(run, 'attempt-0-rank-0');
    const child = () =>
      markedProcesses(job_id, 0).filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'latin1') === 'sleep\x003174\x00';
        } catch {
          return false;
        }
      });
    await until('the program and its setsid child to run', () => existsSync(`${base}.pid`) && child().length > 0);
    const program_pid = Number(readFileSync(`${base}.pid`, 'utf8').split(' ')[1]);
    process.kill(program_pid, 'SIGKILL'); // as the wrapper's ASK_FACTS does for a `.kill` marker
    await until('the sweep to start listing', () => existsSync(started));
    process.kill(-wrapper.pid!, 'SIGTERM'); // the job cancel: every process of the task's group
    await ended;
    assert.equal(readFileSync(`${base}.exit`, 'utf8').trim(), '137', 'the wrapper recorded the exit');
    assert.deepEqual(child(), [], 'the setsid child was swept');
  });
});
