/**
 * A real server whose data directory is on a small tmpfs that fills up: writes are reported as
 * they happened, exits recorded then are acted on, launches wait instead of failing, health says
 * so, and everything resumes once space frees; starting on a full disk says what to do.
 * Needs root (mount); skipped otherwise.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeHighWater } from '../store/sqlite/durability.js';
import { GoodputClient } from '../client/client.js';
import { CLI, cleanup, killGroup, runCli, sleep, waitFor } from '../../test-support/control/harness.js';
import { readFileSync } from 'node:fs';

const root = process.getuid?.() === 0;
const mount = mkdtempSync(join(tmpdir(), 'goodput-diskfull-'));
const logDir = mkdtempSync(join(tmpdir(), 'goodput-diskfull-log-'));
let mounted = false;

/** Fills the file system of `dir` with one file until a write fails; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'ballast');
  const fd = openSync(path, 'w');
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512]) {
      const chunk = Buffer.alloc(size);
      try {
        for (;;) writeSync(fd, chunk);
      } catch {
        // full at this chunk size: go on with smaller ones
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

async function startUp(data_dir: string) {
  const log = openSync(join(logDir, `up-${Date.now()}.log`), 'a');
  const child = spawn(
    process.execPath,
    [
      CLI,
      'up',
      '--data-dir',
      data_dir,
      '--port',
      '0',
      '--cpu-slots',
      '2',
      '--interval-s',
      '1',
      '--grace-s',
      '2',
      '--policy',
      'fifo',
    ],
    { detached: true, stdio: ['ignore', log, log] },
  );
  const info = await waitFor('the server to start', 30_000, async () => {
    const s = JSON.parse(readFileSync(join(data_dir, 'server.json'), 'utf8')) as { url: string; pid: number };
    return s.pid === child.pid ? s : undefined;
  });
  return {
    pid: child.pid!,
    client: new GoodputClient(info.url, readFileSync(join(data_dir, 'admin-token'), 'utf8').trim()),
    url: info.url,
  };
}

describe('full disk under the data directory', { skip: root ? false : 'needs root to mount a tmpfs' }, () => {
  before(() => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mount]);
    mounted = true;
  });
  after(() => {
    if (mounted) execFileSync('umount', ['-l', mount]);
    rmSync(mount, { recursive: true, force: true });
    rmSync(logDir, { recursive: true, force: true });
  });

  it('reports writes as they happened, acts on exits, makes launches wait, and resumes once space frees', async () => {
    const data_dir = join(mount, 'data');
    mkdirSync(data_dir);
    const server = await startUp(data_dir);
    try {
      const c = server.client;
      const early = await c.submit({ name: 'early', command: ['sh', '-c', 'sleep 4'], workdir: '/tmp' });
      await waitFor('early to run', 20_000, async () => (await c.getJob(early.id)).state === 'running');
      await waitFor('the recovery reserve to be taken', 10_000, async () => existsSync(join(data_dir, 'reserve')));
      const ballast = fill(mount);
      // Given up within a second of the disk filling: the store has room to record what happens.
      await waitFor('the reserve to be released', 10_000, async () => !existsSync(join(data_dir, 'reserve')));
      const health = await fetch(`${server.url}/v1/health`);
      assert.equal(health.status, 503);
      assert.equal(((await health.json()) as { store: { state: string } }).store.state, 'full');
      // Every answer matches what happened: a job acknowledged exists, a refused one does not.
      const answered: { name: string; created: boolean }[] = [];
      for (let i = 0; i < 4; i++) {
        const name = `while-full-${i}`;
        const created = await c.submit({ name, command: ['sh', '-c', 'echo started; sleep 1'], workdir: '/tmp' }).then(
          () => true,
          (e: Error) => {
            assert.doesNotMatch(e.message, /internal/i);
            return false;
          },
        );
        answered.push({ name, created });
      }
      // The early job's replica exits while the disk is full; launches meanwhile wait, not fail.
      await sleep(6000);
      for (const j of await c.listJobs()) assert.notEqual(j.state, 'failed', `${j.name}: ${j.reason}`);
      rmSync(ballast);
      await waitFor('every job to succeed once space is free', 40_000, async () => {
        const jobs = await c.listJobs();
        return jobs.every((j) => j.state === 'succeeded') ? jobs : undefined;
      });
      const names = new Set((await c.listJobs()).map((j) => j.name));
      for (const a of answered)
        assert.equal(names.has(a.name), a.created, `${a.name}: answered ${a.created ? 'created' : 'failed'}`);
      assert.equal((await fetch(`${server.url}/v1/health`)).status, 200);
      await waitFor('the reserve to be taken back', 10_000, async () => existsSync(join(data_dir, 'reserve')));
    } finally {
      cleanup(join(mount, 'nothing'), [server]);
      killGroup(server.pid);
      await sleep(300);
      rmSync(data_dir, { recursive: true, force: true });
    }
  });

  it('keeps writing the high-water mark on a full disk (the store commits; the mark must not fail it)', () => {
    const path = join(mount, 'mark.seq');
    writeHighWater(path, 1);
    const ballast = fill(mount);
    try {
      writeHighWater(path, 123456789);
      assert.equal(readFileSync(path, 'utf8').trim(), '123456789');
    } finally {
      rmSync(ballast, { force: true });
      rmSync(path, { force: true });
    }
  });

  it('starting on a full disk says so and what to free, not an internal error', async () => {
    const data_dir = join(mount, 'fresh');
    mkdirSync(data_dir);
    const ballast = fill(mount);
    try {
      const r = await runCli(['up', '--data-dir', data_dir, '--port', '0', '--cpu-slots', '1']);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /disk of the data directory .* is full/);
      assert.doesNotMatch(r.stderr, /internal error|report this/);
    } finally {
      rmSync(ballast, { force: true });
    }
  });
});
