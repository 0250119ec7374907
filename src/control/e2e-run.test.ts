/** End to end: `goodput run`, the single-job supervisor (no separate server). */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CLI, killOwnGroup, runCli, tempDataDir, TRAINER, trainerLines, waitFor } from '../../test-support/control/harness.js';

const dir = tempDataDir('goodput-run-');
const pids: number[] = [];
after(() => {
  for (const pid of pids) killOwnGroup(pid, dir);
  rmSync(dir, { recursive: true, force: true });
});

describe('goodput run', () => {
  it('supervises one job to completion, streaming its log; exit 0', { timeout: 30_000 }, async () => {
    const r = await runCli(['run', '--cpu-slots', '2', '--max-replicas', '2', '--interval-s', '1', '--data-dir', join(dir, 'ok'), '--', process.execPath, TRAINER, '--samples', '6000', '--time-scale', '0.5']);
    assert.equal(r.status, 0, r.stderr);
    const lines = trainerLines(r.stdout);
    assert.equal(lines[0]!.kind, 'resumed');
    assert.equal(lines[lines.length - 1]!.kind, 'done');
    assert.ok(lines[lines.length - 1]!.samples >= 6000);
    assert.match(r.stderr, /job [0-9a-f]+ succeeded/);
  });

  it('exits 1 when the job fails the same way twice', { timeout: 30_000 }, async () => {
    const r = await runCli(['run', '--cpu-slots', '1', '--max-restarts', '1', '--interval-s', '1', '--data-dir', join(dir, 'fail'), '--', process.execPath, '-e', 'console.log("try"); process.exit(3)']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout.match(/^try$/gm)?.length, 2, 'first run plus one restart');
    assert.match(r.stderr, /failed: replica 0 failed with exit code 3 again \(attempt 0 failed the same way\); not retried/);
  });

  it('refuses a job that needs more replicas than the machine has, and exits', { timeout: 30_000 }, async () => {
    const t0 = Date.now();
    const r = await runCli(['run', '--cpu-slots', '1', '--min-replicas', '2', '--max-replicas', '2', '--data-dir', join(dir, 'infeasible'), '--', process.execPath, '-e', '0']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /error\[E_INFEASIBLE\]: job needs at least 2 replicas .* 1 CPU slot/);
    assert.ok(Date.now() - t0 < 20_000, 'it exits instead of waiting forever');
  });

  it('cancels the job on SIGINT and exits 130, leaving no process behind', { timeout: 30_000 }, async () => {
    const script = "console.log('ready ' + process.pid); process.on('SIGTERM', () => process.exit(143)); setInterval(() => {}, 1000)";
    const child = spawn(process.execPath, [CLI, 'run', '--cpu-slots', '1', '--grace-s', '2', '--data-dir', join(dir, 'int'), '--', process.execPath, '-e', script], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    pids.push(child.pid!);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const replica = await waitFor('the replica to start', 15_000, async () => Number(/ready (\d+)/.exec(out)?.[1]) || undefined);
    const status = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    assert.equal(await status, 130);
    assert.throws(() => process.kill(replica, 0), 'the replica is gone');
  });
});
