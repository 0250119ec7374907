/**
 * A job must not run with the server's rights: jobs ran as the server's Unix user and could read the admin token, the
 * secret, the store and other users' files. With `goodput up --run-as-owner` (server as root),
 * against real Unix accounts made for the test (useradd; removed after): alice's job runs as
 * alice, owns its checkpoint directory (0700), and can read none of bob's files, bob's
 * environment, the admin token, the secret or the store.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { HttpError } from '../client/client.js';
import { GoodputClient } from '../client/client.js';
import {
  CLI,
  cleanup,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { lookupAccount } from './accounts.js';

const root = process.getuid?.() === 0;
const suffix = Math.random().toString(36).slice(2, 8);
const accounts = { alice: `gpa${suffix}`, bob: `gpb${suffix}` };
const data_dir = tempDataDir('goodput-mu-');
const workdir = mkdtempSync(join(tmpdir(), 'goodput-mu-work-'));
let server: ServerProcess | undefined;

before(() => {
  if (!root) return;
  chmodSync(workdir, 0o755);
  for (const name of Object.values(accounts))
    execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', name]);
});
after(() => {
  cleanup(data_dir, server ? [server] : []);
  rmSync(workdir, { recursive: true, force: true });
  if (!root) return;
  for (const name of Object.values(accounts)) {
    try {
      execFileSync('pkill', ['-KILL', '-u', name]);
    } catch {
      // no process left
    }
    execFileSync('userdel', [name]);
  }
});

/** A shell script that tries to read each path and prints READ or DENIED per path. */
const probe = (paths: readonly string[]) => [
  '/bin/sh',
  '-c',
  'echo "uid=$(id -u) home=$HOME"; touch "$GOODPUT_CHECKPOINT_DIR/mine" && echo WROTE-OWN; ' +
    'for f in "$@"; do if { [ -d "$f" ] && ls "$f" || cat "$f"; } >/dev/null 2>&1; then echo "READ $f"; else echo "DENIED $f"; fi; done',
  'probe',
  ...paths,
];

describe(
  'multi-user mode: jobs run as their owner (needs root)',
  { skip: root ? false : 'needs root to create Unix users and start jobs as them' },
  () => {
    it('refuses --run-as-owner to a server that is not root', () => {
      const nobody = lookupAccount('nobody')!;
      const dir = mkdtempSync(join(tmpdir(), 'goodput-mu-nobody-'));
      try {
        execFileSync('chown', [String(nobody.uid), dir]);
        const r = spawnSync(
          process.execPath,
          [CLI, 'up', '--run-as-owner', '--data-dir', dir, '--port', '0', '--cpu-slots', '1'],
          { uid: nobody.uid, gid: nobody.gid, encoding: 'utf8', timeout: 30_000 },
        );
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /E_USAGE.*--run-as-owner needs the server to run as root/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('says it is in multi-user mode; refuses at submit a user without a Unix account, and root as an account', async () => {
      server = await startServerProcess(data_dir, ['--cpu-slots', '2', '--interval-s', '1', '--run-as-owner']);
      const log = readFileSync(join(data_dir, 'up.log'), 'utf8');
      assert.match(log, /multi-user mode/);
      const nobody = new GoodputClient(server.url, (await server.client.createToken('nobody')).token);
      await assert.rejects(
        nobody.submit({ name: 'x', command: ['true'], workdir }),
        (e: HttpError) => e.status === 400 && /no Unix account/.test(e.message),
      );
      await assert.rejects(
        server.client.createToken('mallory', { unix_user: 'root' }),
        (e: HttpError) => e.status === 400 && /root/.test(e.message),
      );
    });

    it(
      "alice's job runs as alice and cannot read bob's files, bob's environment or the server's secrets",
      { timeout: 60_000 },
      async () => {
        const s = server!;
        const alice = new GoodputClient(
          s.url,
          (await s.client.createToken('alice', { unix_user: accounts.alice })).token,
        );
        const bob = new GoodputClient(s.url, (await s.client.createToken('bob', { unix_user: accounts.bob })).token);
        const closed = mkdtempSync(join(tmpdir(), 'goodput-mu-closed-')); // 0700 root
        await assert.rejects(
          alice.submit({ name: 'x', command: ['true'], workdir: closed }),
          (e: HttpError) => e.status === 400 && /workdir: Unix account/.test(e.message),
        );
        rmSync(closed, { recursive: true });

        const bobJob = await bob.submit({
          name: 'bob',
          command: ['/bin/sh', '-c', 'echo bob-weights > "$GOODPUT_CHECKPOINT_DIR/ckpt"; echo started; sleep 60'],
          workdir,
          env: { HF_TOKEN: 'hf_bob_secret', LD_LIBRARY_PATH: '/nonexistent-goodput' },
        });
        const bobDir = join(data_dir, 'jobs', bobJob.id);
        const bobPid = await waitFor("bob's job to run", 20_000, async () => {
          const j = await bob.getJob(bobJob.id);
          return j.state === 'running' &&
            readFileSync(join(bobDir, 'logs', 'replica-0.log'), 'utf8').includes('started')
            ? j.current_replicas[0]!.pid
            : undefined;
        });
        const children = readFileSync(`/proc/${bobPid}/task/${bobPid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean);
        const targets = [
          join(data_dir, 'admin-token'),
          join(data_dir, 'secret'),
          join(data_dir, 'goodput.sqlite'),
          join(data_dir, 'goodput.sqlite-wal'),
          join(data_dir, 'jobs'),
          join(bobDir, 'checkpoint', 'ckpt'),
          join(bobDir, 'checkpoint'),
          join(bobDir, 'logs', 'replica-0.log'),
          join(bobDir, 'run'),
          ...children.map((pid) => `/proc/${pid}/environ`),
        ];
        assert.ok(children.length > 0, "bob's command runs under the wrapper");
        // The wrapper runs as root: the spec's variables (LD_LIBRARY_PATH would load bob's code into
        // it) reach it only under hidden names; bob's command has them under their own.
        const environ = (pid: number | string) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        assert.ok(
          !environ(bobPid).some((e) => e.startsWith('LD_LIBRARY_PATH=') || e.startsWith('HF_TOKEN=')),
          "nothing of the spec in root's wrapper",
        );
        // The wrapper's children: bob's command, and (with a log cap) the log writer, which runs as
        // the server's account and so must not get the spec's variables either.
        const command = children.filter((pid) => environ(pid).includes('HF_TOKEN=hf_bob_secret'));
        assert.equal(command.length, 1, "bob's command has the spec's variables");
        assert.ok(environ(command[0]!).includes('LD_LIBRARY_PATH=/nonexistent-goodput'));
        for (const pid of children.filter((p) => p !== command[0]))
          assert.ok(
            !environ(pid).some((e) => e.startsWith('LD_LIBRARY_PATH=') || e.startsWith('HF_TOKEN=')),
            `nothing of the spec in the wrapper's other child ${pid}`,
          );
        const aliceJob = await alice.submit({ name: 'alice', command: probe(targets), workdir });
        await waitFor("alice's job to finish", 20_000, async () =>
          ['succeeded', 'failed'].includes((await alice.getJob(aliceJob.id)).state),
        );
        const out = (await alice.logs(aliceJob.id, 0, 0)).text;
        assert.match(out, new RegExp(`uid=${lookupAccount(accounts.alice)!.uid} `), out);
        assert.match(out, /WROTE-OWN/, out);
        for (const t of targets) assert.ok(out.includes(`DENIED ${t}`), `alice could read ${t}:\n${out}`);
        assert.equal((await alice.getJob(aliceJob.id)).state, 'succeeded');

        const ckpt = statSync(join(data_dir, 'jobs', aliceJob.id, 'checkpoint'));
        assert.equal(ckpt.uid, lookupAccount(accounts.alice)!.uid);
        assert.equal(ckpt.mode & 0o777, 0o700);
        assert.equal(
          statSync(join(bobDir, 'checkpoint', 'ckpt')).uid,
          lookupAccount(accounts.bob)!.uid,
          "bob's job wrote as bob",
        );
        await bob.cancel(bobJob.id);
      },
    );
  },
);
