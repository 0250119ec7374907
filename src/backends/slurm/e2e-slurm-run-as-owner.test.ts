/**
 * `goodput up --backend slurm --run-as-owner` against real Slurm daemons and real Unix accounts
 * made for the test (useradd with a random prefix; removed after): each attempt is a Slurm job of
 * its owner's Unix account and mapped Slurm account (squeue, scontrol, `sacct -c` from
 * jobcomp/filetxt: the test cluster has no slurmdbd), runs as the owner (`id -u`, /proc), writes
 * files the owner owns; one user reads none of the other's job files or environment and can
 * neither cancel the other's job through Goodput (403/404) nor through Slurm (scancel as that
 * user); a restarted server adopts the jobs of both users; refused mappings fail at submit.
 * Needs root (useradd, a server that runs jobs as others) and Slurm; skipped with a message otherwise.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GoodputClient, type HttpError } from '../../client/client.js';
import { lookupAccount } from '../../multiuser/accounts.js';
import type { RunAs } from '../backend.js';
import {
  cleanup,
  killGroup,
  sleep,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../../test-support/control/harness.js';
import { slurmMissing, startOwnSlurmCluster, slurmUpArgs, type SlurmCluster } from './testing/slurm-cluster.js';

const skip = slurmMissing() ?? (process.getuid?.() === 0 ? undefined : 'needs root to create Unix users');
const prefix = `gps${Math.random().toString(36).slice(2, 7)}`;
const group = `${prefix}g`;
/** alice and bob are in the group the partition allows; carol is not (Slurm refuses her jobs). */
const unix = { alice: `${prefix}a`, bob: `${prefix}b`, carol: `${prefix}c` };
const slurmAccount = { alice: 'proj_alice', bob: 'proj_bob' };

/** Records who runs it, writes a checkpoint, then waits to be stopped. */
const JOB = [
  '/bin/sh',
  '-c',
  'id -u > "$GOODPUT_CHECKPOINT_DIR/uid"; echo "weights of $GOODPUT_JOB_ID" > "$GOODPUT_CHECKPOINT_DIR/ckpt"; ' +
    'echo started; trap "exit 0" TERM; sleep 600 & wait',
];

/** Runs `argv` as `account` (its uid, gid and groups); the status and output. */
function as(account: RunAs, argv: readonly string[], env: Readonly<Record<string, string>> = {}) {
  const r = spawnSync('setpriv', [`--reuid=${account.uid}`, `--regid=${account.gid}`, '--init-groups', '--', ...argv], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    cwd: '/',
    timeout: 30_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('goodput up --backend slurm --run-as-owner (real Slurm daemons, real Unix users)', { skip }, () => {
  let cluster: SlurmCluster | undefined;
  const data_dir = tempDataDir('goodput-slurm-owner-');
  const workdir = mkdtempSync(join(tmpdir(), 'goodput-slurm-owner-work-'));
  const servers: ServerProcess[] = [];
  const accounts: Record<string, RunAs> = {};
  before(async () => {
    execFileSync('chmod', ['755', workdir]);
    execFileSync('groupadd', [group]);
    for (const [who, name] of Object.entries(unix)) {
      const groups = who === 'carol' ? [] : ['-G', group];
      execFileSync('useradd', ['--no-create-home', '--shell', '/bin/sh', ...groups, name]);
      accounts[who] = lookupAccount(name)!;
    }
    // After the accounts exist: slurmctld reads AllowGroups' members when it starts.
    cluster = await startOwnSlurmCluster({ allow_groups: [group] });
    process.env.SLURM_CONF = cluster.env.SLURM_CONF;
  });
  after(async () => {
    cleanup(data_dir, servers);
    await cluster?.stop();
    rmSync(workdir, { recursive: true, force: true });
    for (const name of Object.values(unix)) {
      spawnSync('pkill', ['-KILL', '-u', name]);
      spawnSync('userdel', [name]);
    }
    spawnSync('groupdel', [group]);
  });
  const up = async (port?: string) => {
    const s = await startServerProcess(data_dir, [
      ...slurmUpArgs('optimus', ['--run-as-owner']),
      // A fixed --port would make the dashboard's default 7879, which another server may hold.
      ...(port ? ['--port', port, '--dashboard-port', '0'] : []),
    ]);
    servers.push(s);
    return s;
  };
  const squeue = async (id: string) => (await cluster!.cmd('squeue', ['-h', '-j', id, '-o', '%u|%a|%T'])).trim();

  it('maps users to Slurm accounts (admin only, with a Unix account); refuses at submit what cannot run', async () => {
    const s = await up();
    assert.match(readFileSync(join(data_dir, 'up.log'), 'utf8'), /multi-user mode/);
    await assert.rejects(
      s.client.createToken('dave', { slurm_account: 'proj_dave' }),
      (e: HttpError) => e.status === 400 && /has no Unix account/.test(e.message),
    );
    const nobody = new GoodputClient(s.url, (await s.client.createToken('nobody')).token);
    await assert.rejects(
      nobody.createToken(undefined, { slurm_account: 'x' }),
      (e: HttpError) => e.status === 403 && /only an admin/.test(e.message),
    );
    await assert.rejects(
      nobody.submit({ name: 'x', command: JOB, workdir }),
      (e: HttpError) => e.status === 400 && e.code === 'E_SPEC' && /no Unix account/.test(e.message),
    );
    await assert.rejects(
      s.client.createToken('mallory', { unix_user: 'root', slurm_account: 'proj' }),
      (e: HttpError) => e.status === 400 && /root/.test(e.message),
    );
    // Slurm refuses carol's jobs (her group may not use the partition): refused at submit, in Slurm's words.
    const carol = new GoodputClient(s.url, (await s.client.createToken('carol', { unix_user: unix.carol })).token);
    await assert.rejects(
      carol.submit({ name: 'x', command: JOB, workdir }),
      (e: HttpError) =>
        e.status === 400 &&
        e.code === 'E_SPEC' &&
        new RegExp(`Slurm refuses jobs of Unix account '${unix.carol}'.*group not permitted`).test(e.message),
    );
    assert.equal((await cluster!.cmd('squeue', ['-h'])).trim(), '', 'the check queued no job');
  });

  it(
    "each job is a Slurm job of its owner and account; neither user reads, cancels or signals the other's",
    { timeout: 240_000 },
    async () => {
      let s = servers[0]!;
      const client = async (who: 'alice' | 'bob') =>
        new GoodputClient(
          s.url,
          (await s.client.createToken(who, { unix_user: unix[who], slurm_account: slurmAccount[who] })).token,
        );
      const alice = await client('alice');
      const bob = await client('bob');
      const jobs = {
        alice: (await alice.submit({ name: 'a', command: JOB, workdir, max_replicas: 1 })).id,
        bob: (await bob.submit({ name: 'b', command: JOB, workdir, max_replicas: 1 })).id,
      };
      const dir = (who: 'alice' | 'bob') => join(data_dir, 'jobs', jobs[who]);
      const slurmIds = {
        alice: await waitFor("alice's job to run", 60_000, async () => running(alice, jobs.alice, dir('alice'))),
        bob: await waitFor("bob's job to run", 60_000, async () => running(bob, jobs.bob, dir('bob'))),
      };
      for (const who of ['alice', 'bob'] as const) {
        const a = accounts[who]!;
        // Slurm's view: the job's user and account.
        assert.equal(await squeue(slurmIds[who]), `${unix[who]}|${slurmAccount[who]}|RUNNING`);
        const shown = await cluster!.cmd('scontrol', ['show', 'job', slurmIds[who]]);
        assert.match(shown, new RegExp(`UserId=${unix[who]}\\(${a.uid}\\) GroupId=${unix[who]}\\(${a.gid}\\)`));
        assert.match(shown, new RegExp(`Account=${slurmAccount[who]} `));
        // Inside the job: `id -u`, and the files it wrote are the owner's.
        const ckpt = join(dir(who), 'checkpoint');
        assert.equal(readFileSync(join(ckpt, 'uid'), 'utf8').trim(), String(a.uid));
        assert.equal(statSync(join(ckpt, 'ckpt')).uid, a.uid);
        // The layout: job dir and logs/ the server's 0711; checkpoint/, run/ the owner's 0700;
        // the log the owner's 0600.
        const mode = (p: string) => [statSync(p).uid, statSync(p).mode & 0o777];
        assert.deepEqual(mode(dir(who)), [0, 0o711]);
        assert.deepEqual(mode(join(dir(who), 'logs')), [0, 0o711]);
        assert.deepEqual(mode(ckpt), [a.uid, 0o700]);
        assert.deepEqual(mode(join(dir(who), 'run')), [a.uid, 0o700]);
        assert.deepEqual(mode(join(dir(who), 'logs', 'replica-0.log')), [a.uid, 0o600]);
      }
      // The program's process (the wrapper's .pid: "<node> <pid>"; every node is this host) runs as alice.
      const pid = readFileSync(join(dir('alice'), 'run', 'attempt-0-rank-0.pid'), 'utf8')
        .trim()
        .split(' ')[1]!;
      assert.match(readFileSync(`/proc/${pid}/status`, 'utf8'), new RegExp(`\\nUid:\\t${accounts.alice!.uid}\\t`));
      assert.match(readFileSync(`/proc/${pid}/environ`, 'utf8'), /\0GOODPUT_TOKEN=gpj/, 'the report token is there');

      // bob reads nothing of alice's job: files, logs, run files, the environment with her report token.
      const b = accounts.bob!;
      for (const path of [
        join(dir('alice'), 'checkpoint', 'ckpt'),
        join(dir('alice'), 'logs', 'replica-0.log'),
        join(dir('alice'), 'run', 'attempt-0-rank-0.pid'),
        `/proc/${pid}/environ`,
      ])
        assert.notEqual(as(b, ['cat', path]).status, 0, `bob could read ${path}`);
      assert.notEqual(as(b, ['ls', join(dir('alice'), 'run')]).status, 0, "bob could list alice's run/");
      assert.notEqual(as(b, ['ls', dir('alice')]).status, 0, "bob could list alice's job directory");
      assert.equal(
        as(accounts.alice!, ['cat', join(dir('alice'), 'checkpoint', 'ckpt')]).status,
        0,
        'alice reads hers',
      );

      // Through Goodput: bob cannot see, cancel or bulk-cancel alice's job.
      await assert.rejects(bob.getJob(jobs.alice), (e: HttpError) => [403, 404].includes(e.status));
      await assert.rejects(bob.cancel(jobs.alice), (e: HttpError) => [403, 404].includes(e.status));
      await assert.rejects(bob.cancelMatching({ user: 'alice' }), (e: HttpError) => e.status === 403);
      // Through Slurm: scancel as bob (a stop signal, a cancel) is refused.
      const slurmEnv = { SLURM_CONF: cluster!.env.SLURM_CONF };
      for (const args of [['--signal=28', '--full'], []]) {
        const r = as(b, ['scancel', ...args, slurmIds.alice], slurmEnv);
        assert.notEqual(r.status, 0, r.out);
        assert.match(r.out, /Access\/permission denied/);
      }
      await sleep(1500);
      assert.equal(await squeue(slurmIds.alice), `${unix.alice}|${slurmAccount.alice}|RUNNING`);
      assert.equal((await alice.getJob(jobs.alice)).state, 'running');

      // A restarted server finds both users' Slurm jobs again (squeue as root lists every user's).
      killGroup(s.pid);
      await sleep(2000);
      s = await up(new URL(s.url).port);
      assert.match(readFileSync(join(data_dir, 'up.log'), 'utf8'), /re-adopted 2 running replica/);
      const alice2 = new GoodputClient(s.url, (await s.client.createToken('alice')).token);
      assert.equal((await alice2.getJob(jobs.alice)).state, 'running');
      assert.equal(await squeue(slurmIds.alice), `${unix.alice}|${slurmAccount.alice}|RUNNING`);

      // The server (root) stops another user's Slurm job; the job's SIGTERM handler ends it.
      for (const who of ['alice', 'bob'] as const) await s.client.cancel(jobs[who]);
      await waitFor('both Slurm jobs to end', 60_000, async () => (await cluster!.cmd('squeue', ['-h'])).trim() === '');
      for (const who of ['alice', 'bob'] as const)
        await waitFor(`${who}'s job to be cancelled`, 30_000, async () =>
          (await s.client.getJob(jobs[who])).state === 'cancelled' ? true : undefined,
        );
      // Slurm's record of the ended jobs (jobcomp/filetxt; `sacct -c`): user and account.
      const sacct = await waitFor('sacct -c to list both jobs', 30_000, async () => {
        const out = await cluster!.cmd('sacct', ['-c', '-n', '-P', '-o', 'JobID,User,Account']);
        return Object.values(slurmIds).every((id) => out.split('\n').some((l) => l.startsWith(`${id}|`)))
          ? out
          : undefined;
      });
      for (const who of ['alice', 'bob'] as const) {
        const line = sacct.split('\n').find((l) => l.startsWith(`${slurmIds[who]}|`))!;
        assert.match(line, new RegExp(`^${slurmIds[who]}\\|${unix[who]}(\\(\\d+\\))?\\|${slurmAccount[who]}$`), sacct);
      }
    },
  );
});

/** The Slurm job id once the job runs, its program wrote its checkpoint and log line and the wrapper its .pid. */
async function running(c: GoodputClient, id: string, dir: string): Promise<string | undefined> {
  const j = await c.getJob(id);
  if (j.state !== 'running') return undefined;
  try {
    if (!readFileSync(join(dir, 'logs', 'replica-0.log'), 'utf8').includes('started')) return undefined;
    readFileSync(join(dir, 'checkpoint', 'ckpt'));
    readFileSync(join(dir, 'run', 'attempt-0-rank-0.pid'));
  } catch {
    return undefined;
  }
  return j.current_replicas[0]?.launch_id;
}
