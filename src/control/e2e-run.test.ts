/** End to end: `goodput run`, the single-job supervisor (no separate server). */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CLI,
  cleanup,
  killOwnGroup,
  runCli,
  tempDataDir,
  TRAINER,
  trainerLines,
  waitFor,
} from '../../test-support/control/harness.js';
import { serverLockHolder } from '../datadir/server-lock.js';
import { dataFiles } from '../server/server.js';
import { pythonWith } from '../../test-support/control/python.js';

const dir = tempDataDir('goodput-run-');
const python = pythonWith(['sys']);
const pids: number[] = [];
after(() => {
  for (const pid of pids) killOwnGroup(pid, dir);
  for (const name of ['resume', 'hangup']) cleanup(join(dir, name));
  rmSync(dir, { recursive: true, force: true });
});

/** A replica script: prints 'ready PID', waits until the file `go` exists (at most 60 s), prints 'finished PID'. */
const WAIT_FOR_GO = (go: string): string =>
  `console.log('ready ' + process.pid); const t0 = Date.now(); const fs = require('fs'); ` +
  `const i = setInterval(() => { if (fs.existsSync(${JSON.stringify(go)}) || Date.now() - t0 > 60000) { clearInterval(i); console.log('finished ' + process.pid); } }, 100)`;

/** Collects a child's stdout and stderr as they arrive. */
function collect(child: ChildProcess): { out: () => string } {
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  return { out: () => text };
}

const exited = (child: ChildProcess): Promise<number | null> =>
  new Promise((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

describe('goodput run', () => {
  it('supervises one job to completion, streaming its log; exit 0', { timeout: 30_000 }, async () => {
    const r = await runCli([
      'run',
      '--cpu-slots',
      '2',
      '--max-replicas',
      '2',
      '--interval-s',
      '1',
      '--data-dir',
      join(dir, 'ok'),
      '--',
      process.execPath,
      TRAINER,
      '--samples',
      '6000',
      '--time-scale',
      '0.5',
    ]);
    assert.equal(r.status, 0, r.stderr);
    const lines = trainerLines(r.stdout);
    assert.equal(lines[0]!.kind, 'resumed');
    assert.equal(lines[lines.length - 1]!.kind, 'done');
    assert.ok(lines[lines.length - 1]!.samples >= 6000);
    assert.match(r.stderr, /job [0-9a-f]+ succeeded/);
  });

  it('exits 1 when the job fails the same way twice', { timeout: 30_000 }, async () => {
    const r = await runCli([
      'run',
      '--cpu-slots',
      '1',
      '--max-restarts',
      '1',
      '--interval-s',
      '1',
      '--data-dir',
      join(dir, 'fail'),
      '--',
      process.execPath,
      '-e',
      'console.log("try"); process.exit(3)',
    ]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout.match(/^try$/gm)?.length, 2, 'first run plus one restart');
    assert.match(
      r.stderr,
      /failed: replica 0 failed with exit code 3 again \(attempt 0 failed the same way\); not retried/,
    );
  });

  it(
    'warns when the script starts its own processes (mp.spawn), and still runs it',
    { timeout: 30_000, skip: python ? false : 'no python3' },
    async () => {
      // The launcher call is never reached: the warning is about the script's text.
      writeFileSync(
        join(dir, 'spawner.py'),
        'import sys\nif len(sys.argv) > 9:\n    import torch.multiprocessing as mp\n    mp.spawn(print, nprocs=2)\nprint("ran")\n',
      );
      const r = await runCli([
        'run',
        '--cpu-slots',
        '2',
        '-n',
        '2',
        '--interval-s',
        '1',
        '--workdir',
        dir,
        '--data-dir',
        join(dir, 'spawn'),
        '--',
        python!,
        'spawner.py',
      ]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stderr,
        /goodput: warning: spawner\.py starts its own processes \(mp\.spawn, line 4\).*or use -n 1\./,
      );
    },
  );

  it('refuses a job that needs more replicas than the machine has, and exits', { timeout: 30_000 }, async () => {
    const t0 = Date.now();
    const r = await runCli([
      'run',
      '--cpu-slots',
      '1',
      '--min-replicas',
      '2',
      '--max-replicas',
      '2',
      '--data-dir',
      join(dir, 'infeasible'),
      '--',
      process.execPath,
      '-e',
      '0',
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /error\[E_INFEASIBLE\]: job needs at least 2 replicas .* 1 CPU slot/);
    assert.ok(Date.now() - t0 < 20_000, 'it exits instead of waiting forever');
  });

  it('cancels the job on SIGINT and exits 130, leaving no process behind', { timeout: 30_000 }, async () => {
    const script =
      "console.log('ready ' + process.pid); process.on('SIGTERM', () => process.exit(143)); setInterval(() => {}, 1000)";
    const child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        '--cpu-slots',
        '1',
        '--grace-s',
        '2',
        '--data-dir',
        join(dir, 'int'),
        '--',
        process.execPath,
        '-e',
        script,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    pids.push(child.pid!);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const replica = await waitFor(
      'the replica to start',
      15_000,
      async () => Number(/ready (\d+)/.exec(out)?.[1]) || undefined,
    );
    const status = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    assert.equal(await status, 130);
    assert.throws(() => process.kill(replica, 0), 'the replica is gone');
  });

  it(
    'a second Ctrl-C stops a replica that does not checkpoint at once, instead of waiting out the grace period',
    { timeout: 30_000 },
    async () => {
      const script =
        "console.log('ready ' + process.pid); process.on('SIGTERM', () => console.log('ignoring SIGTERM')); setInterval(() => {}, 1000)";
      const child = spawn(
        process.execPath,
        [
          CLI,
          'run',
          '--cpu-slots',
          '1',
          '--grace-s',
          '120',
          '--data-dir',
          join(dir, 'int2'),
          '--',
          process.execPath,
          '-e',
          script,
        ],
        { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      pids.push(child.pid!);
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const replica = await waitFor(
        'the replica to start',
        15_000,
        async () => Number(/ready (\d+)/.exec(out)?.[1]) || undefined,
      );
      const status = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGINT');
      await waitFor('the replica to get SIGTERM', 10_000, async () => /ignoring SIGTERM/.test(out) || undefined);
      assert.match(err, /interrupted: cancelling the job .*Ctrl-C again to stop them at once/);
      child.kill('SIGINT');
      assert.equal(await status, 130);
      assert.match(err, /interrupted again: stopping the replicas now \(SIGKILL\)/);
      // SIGKILLed with its wrapper, the orphan may take a moment to be reaped by init.
      await waitFor('the replica to be gone', 5_000, async () => {
        try {
          process.kill(replica, 0);
          return /^State:\s+Z/m.test(readFileSync(`/proc/${replica}/status`, 'utf8')) || undefined;
        } catch {
          return true;
        }
      });
    },
  );

  it(
    'after a kill -9 of goodput run, rerunning the same command resumes its job; another command is refused',
    { timeout: 60_000 },
    async () => {
      const data_dir = join(dir, 'resume');
      const go = join(dir, 'resume-go');
      const command = [process.execPath, '-e', WAIT_FOR_GO(go)];
      const first = spawn(
        process.execPath,
        [CLI, 'run', '--cpu-slots', '1', '--interval-s', '1', '--data-dir', data_dir, '--', ...command],
        { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      pids.push(first.pid!);
      const firstOut = collect(first);
      const replica = await waitFor(
        'the replica to start',
        20_000,
        async () => Number(/ready (\d+)/.exec(firstOut.out())?.[1]) || undefined,
      );
      const job = /job ([0-9a-f]+) \(/.exec(firstOut.out())?.[1];
      assert.ok(job, firstOut.out());
      first.kill('SIGKILL'); // the supervisor alone: its replica runs on in its own process group
      await exited(first);
      assert.ok(alive(replica), 'the replica outlives its supervisor');

      const other = await runCli([
        'run',
        '--cpu-slots',
        '1',
        '--data-dir',
        data_dir,
        '--',
        process.execPath,
        '-e',
        '0',
      ]);
      assert.equal(other.status, 1, other.stderr);
      assert.match(
        other.stderr,
        new RegExp(`E_CONFLICT.*unfinished job ${job} .*Rerun that command with this --data-dir to resume it`),
      );
      assert.ok(alive(replica), 'a refused run leaves the earlier job alone');

      const again = spawn(
        process.execPath,
        [CLI, 'run', '--cpu-slots', '1', '--interval-s', '1', '--data-dir', data_dir, '--', ...command],
        { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      pids.push(again.pid!);
      const againOut = collect(again);
      await waitFor('the rerun to resume the job', 20_000, async () =>
        againOut.out().includes(`resuming job ${job}`) ? true : undefined,
      );
      writeFileSync(go, '');
      assert.equal(await exited(again), 0, againOut.out());
      assert.match(
        againOut.out(),
        new RegExp(`finished ${replica}\n`),
        'the same replica ran on to the end, streamed by the rerun',
      );
      assert.match(againOut.out(), new RegExp(`job ${job} succeeded`));
      assert.doesNotMatch(againOut.out(), /ready \d+/, 'no second copy of the script started');
    },
  );

  it(
    'cancels the job when its terminal hangs up (SIGHUP), leaving no process behind',
    { timeout: 60_000, skip: hasScript ? false : "no 'script' command (util-linux) to give goodput run a terminal" },
    async () => {
      const data_dir = join(dir, 'hangup');
      mkdirSync(data_dir, { recursive: true });
      const replicaJs = join(dir, 'hangup-replica.js');
      writeFileSync(replicaJs, WAIT_FOR_GO(join(dir, 'never')));
      // script(1) runs goodput run on a pseudo-terminal; killing script closes it, as a dropped SSH session does.
      const line = [
        process.execPath,
        CLI,
        'run',
        '--cpu-slots',
        '1',
        '--grace-s',
        '2',
        '--data-dir',
        data_dir,
        '--',
        process.execPath,
        replicaJs,
      ]
        .map((a) => `'${a}'`)
        .join(' ');
      const terminal = spawn('script', ['-qfc', line, '/dev/null'], {
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      pids.push(terminal.pid!);
      const out = collect(terminal);
      const replica = await waitFor(
        'the replica to start',
        20_000,
        async () => Number(/ready (\d+)/.exec(out.out())?.[1]) || undefined,
      );
      const supervisor = serverLockHolder(dataFiles(data_dir).lock);
      assert.ok(supervisor !== undefined && alive(supervisor), 'goodput run holds the data directory');
      terminal.kill('SIGKILL');
      await waitFor('the replica to stop', 20_000, async () => (alive(replica) ? undefined : true));
      await waitFor('goodput run to exit', 20_000, async () => (alive(supervisor) ? undefined : true));
      // The job ended (cancelled), so a new run in the directory is not refused as a conflict.
      const next = await runCli(['run', '--cpu-slots', '1', '--data-dir', data_dir, '--', process.execPath, '-e', '0']);
      assert.equal(next.status, 0, next.stderr);
    },
  );
});
