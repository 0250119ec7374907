/**
 * The store's files must not be readable by other users: goodput.sqlite, -wal and -shm were 0644, and in a data directory that
 * already existed with mode 0755 another Unix user read a job's HF_TOKEN from the database.
 * With umask 000 and an existing 0755 directory of 0644 files, every file of a real server is
 * 0600 and every directory 0700 after start, the start says what it fixed, and another Unix
 * account (nobody) reads nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  cleanup,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { lookupAccount } from '../multiuser/accounts.js';
import { dataDirMode, secureDataDir } from './secure.js';

const data_dir = tempDataDir('goodput-modes-');
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));

const mode = (path: string) => statSync(path).mode & 0o777;

describe('private data directory', () => {
  it(
    'makes every file 0600 and the directory 0700 whatever the umask and the modes before',
    { timeout: 60_000 },
    async () => {
      process.umask(0); // inherited by the server
      const first = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '60']);
      servers.push(first); // killed by cleanup if an assertion fails before it is stopped
      await first.client.submit({
        name: 'with-secret',
        command: ['true'],
        workdir: data_dir,
        env: { HF_TOKEN: 'hf_secret' },
        max_replicas: 1,
      });
      const ran = await first.client.submit({ name: 'ran', command: ['true'], workdir: data_dir });
      await waitFor('the job to finish', 20_000, async () => (await first.client.getJob(ran.id)).state === 'succeeded');
      const jobDir = join(data_dir, 'jobs', ran.id);
      for (const f of readdirSync(join(jobDir, 'run'))) assert.equal(mode(join(jobDir, 'run', f)), 0o600, `run/${f}`);
      assert.equal(mode(join(jobDir, 'logs', 'replica-0.log')), 0o600);
      for (const d of ['', 'run', 'logs', 'checkpoint']) assert.equal(mode(join(jobDir, d)), 0o700, `jobs/<id>/${d}`);
      const privateFiles = () =>
        readdirSync(data_dir).filter((f) => statSync(join(data_dir, f)).isFile() && f !== 'up.log'); // up.log is the test's
      for (const f of privateFiles()) assert.equal(mode(join(data_dir, f)), 0o600, `${f} at the first start`);
      process.kill(first.pid, 'SIGTERM');
      await waitFor('the server to stop', 10_000, async () => first.child.exitCode !== null);
      chmodSync(data_dir, 0o755);
      for (const f of readdirSync(data_dir))
        if (statSync(join(data_dir, f)).isFile()) chmodSync(join(data_dir, f), 0o644);

      const s = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '60']);
      servers.push(s);
      await s.client.submit({ name: 'again', command: ['true'], workdir: data_dir, max_replicas: 1 });
      const log = readFileSync(join(data_dir, 'up.log'), 'utf8');
      assert.match(log, new RegExp(`fixed the mode of ${data_dir}: 0755 -> 0700`));
      assert.match(
        log,
        /single-user mode: every job runs as the server's own Unix account/,
        'the start says which mode',
      );
      assert.equal(mode(data_dir), 0o700);
      assert.equal(mode(join(data_dir, 'jobs')), 0o700);
      const files = privateFiles();
      for (const f of [
        'goodput.sqlite',
        'goodput.sqlite-wal',
        'goodput.sqlite-shm',
        'secret',
        'admin-token',
        'server.json',
        'server.pid',
      ])
        assert.ok(files.includes(f), f);
      for (const f of files) assert.equal(mode(join(data_dir, f)), 0o600, f);

      const nobody = lookupAccount('nobody');
      if (process.getuid?.() === 0 && nobody) {
        const read = spawnSync('cat', [join(data_dir, 'goodput.sqlite')], { uid: nobody.uid, gid: nobody.gid });
        assert.notEqual(read.status, 0, 'another Unix user cannot read the store');
      }
    },
  );

  it(
    'refuses a data directory that another Unix user owns',
    { skip: process.getuid?.() === 0 ? false : 'needs root to chown' },
    () => {
      const other = tempDataDir('goodput-owned-');
      try {
        const nobody = lookupAccount('nobody')!;
        spawnSync('chown', [`${nobody.uid}`, other]);
        assert.throws(() => secureDataDir(other, false), /belongs to uid .*chown it or pass another --data-dir/);
        assert.equal(dataDirMode(true), 0o711);
      } finally {
        cleanup(other);
      }
    },
  );
});
