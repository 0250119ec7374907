/** End to end through the compiled CLI: submit (file and flags), ls, show, logs, cancel, nodes, auth. */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';

const data_dir = tempDataDir();
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));
let server: ServerProcess;
const dd = () => ['--data-dir', data_dir];

/**
 * A limit that catches a CLI or server that hangs, not a slow one: these tests take 1-3 s alone and
 * one took over 30 s in the lanes of the full suite (10x, beside the heavy lanes).
 */
const CLI_TEST_LIMIT_MS = 120_000;

describe('goodput CLI against a live server', () => {
  before(async () => {
    server = await startServerProcess(data_dir, [
      '--cpu-slots',
      '2',
      '--interval-s',
      '1',
      '--grace-s',
      '2',
      '--policy',
      'fifo',
    ]);
    servers.push(server);
  });

  it('runs spec arguments with shell metacharacters as literal arguments', { timeout: CLI_TEST_LIMIT_MS }, async () => {
    const evil = ['$(touch pwned)', '; touch pwned2', '`touch pwned3`', '&& false', '|', '>', 'out.txt', '$HOME', '*'];
    const spec = join(data_dir, 'literal.yaml');
    writeFileSync(
      spec,
      [
        'name: literal',
        'command:',
        `  - ${JSON.stringify(process.execPath)}`,
        '  - -e',
        `  - ${JSON.stringify('console.log("ARGV=" + JSON.stringify(process.argv.slice(1)))')}`,
        ...evil.map((a) => `  - ${JSON.stringify(a)}`),
        'max_replicas: 1',
        'env:',
        '  GREETING: "hello; world"',
        '',
      ].join('\n'),
    );
    const submitted = await runCli(['submit', spec, '--json', '--workdir', data_dir, ...dd()]);
    assert.equal(submitted.status, 0, submitted.stderr);
    const job = JSON.parse(submitted.stdout) as { id: string; name: string; spec: { command: string[] } };
    assert.deepEqual(job.spec.command.slice(3), evil);
    await waitFor(
      'literal job to succeed',
      20_000,
      async () => (await server.client.getJob(job.id)).state === 'succeeded',
    );
    const logs = await runCli(['logs', job.id, ...dd()]);
    assert.equal(logs.status, 0);
    const line = logs.stdout.split('\n').find((l) => l.startsWith('ARGV='));
    assert.deepEqual(JSON.parse(line!.slice(5)), evil);
    for (const f of ['pwned', 'pwned2', 'pwned3', 'out.txt']) assert.equal(existsSync(join(data_dir, f)), false, f);
  });

  it(
    'submits from flags, lists (table and --json), shows, follows logs and cancels',
    { timeout: CLI_TEST_LIMIT_MS },
    async () => {
      const script =
        "console.log('started'); process.on('SIGTERM', () => { console.log('bye'); process.exit(143); }); setInterval(() => {}, 1000)";
      const sub = await runCli([
        'submit',
        '--name',
        'sleeper',
        '--max-replicas',
        '1',
        '--env',
        'A=1',
        ...dd(),
        '--',
        process.execPath,
        '-e',
        script,
      ]);
      assert.equal(sub.status, 0, sub.stderr);
      const id = /submitted job ([0-9a-f]+) \(sleeper\)/.exec(sub.stdout)![1]!;
      await waitFor('sleeper to run', 15_000, async () => (await server.client.getJob(id)).state === 'running');
      const ls = await runCli(['ls', '--json', ...dd()]);
      const jobs = JSON.parse(ls.stdout) as Record<string, unknown>[];
      const mine = jobs.find((j) => j.id === id)!;
      for (const k of ['id', 'name', 'state', 'replicas', 'restarts', 'submitted_at', 'finished_at'])
        assert.ok(k in mine, k);
      assert.equal(mine.state, 'running');
      assert.equal(mine.replicas, 1);
      assert.equal(mine.finished_at, null);
      const table = await runCli(['ls', ...dd()]);
      assert.match(table.stdout, /^ID\s+NAME\s+USER\s+STATE\s+REPLICAS\s+RESTARTS/);
      assert.match(table.stdout, new RegExp(`^${id}\\s+sleeper\\s+admin\\s+running\\s+1\\s+0`, 'm'));
      const show = await runCli(['show', 'sleeper', ...dd()]);
      assert.match(show.stdout, /state\s+running/);
      const follow = runCli(['logs', id, '-f', ...dd()]);
      await waitFor('log output', 10_000, async () => (await server.client.logs(id, 0, 0)).text.includes('started'));
      const nodes = await runCli(['nodes', '--json', ...dd()]);
      assert.equal(
        (JSON.parse(nodes.stdout) as { devices: { job: string | null }[] }[])[0]!.devices.filter((d) => d.job === id)
          .length,
        1,
      );
      const cancel = await runCli(['cancel', id, ...dd()]);
      assert.equal(cancel.status, 0, cancel.stderr);
      const followed = await follow;
      assert.equal(followed.status, 0);
      assert.match(followed.stdout, /started[\s\S]*bye/, 'logs -f streams until the job ends');
      const detail = JSON.parse((await runCli(['show', id, '--json', ...dd()])).stdout) as {
        state: string;
        events: { kind: string }[];
        current_replicas: { exit_code: number }[];
      };
      assert.equal(detail.state, 'cancelled');
      await waitFor(
        'the replica to exit',
        10_000,
        async () => (await server.client.getJob(id)).current_replicas[0]!.exit_code === 143,
      );
    },
  );

  it('refuses bad specs naming every bad field, without a stack trace', async () => {
    const spec = join(data_dir, 'bad.yaml');
    writeFileSync(
      spec,
      'name: "no spaces allowed"\ncommand: "python train.py"\nmax_replicas: 0\nmin_replicas: 2\nretries: 3\n',
    );
    const r = await runCli(['submit', spec, ...dd()]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^goodput: error\[E_SPEC\]: /);
    for (const field of ['name', 'command', 'max_replicas', 'retries'])
      assert.match(r.stderr, new RegExp(`${field}:`), field);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    const noCommand = await runCli(['submit', ...dd()]);
    assert.equal(noCommand.status, 2);
  });

  it('up refuses a bad policy knob before creating anything', async () => {
    const fresh = join(data_dir, 'never-created');
    const r = await runCli(['up', '--data-dir', fresh, '--cpu-slots', '1', '--port', '0', '--policy-param', 'bogus=1']);
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /^goodput: error\[E_BAD_POLICY_PARAM\]: --policy-param bogus=1: 'bogus' is not a parameter of policy 'goodput'; valid: .*rank_exponent/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.equal(existsSync(fresh), false);
  });

  it('enforces auth: no or bad token is refused, users cannot cancel each other', async () => {
    const url = server.url;
    const none = await runCli(['ls', '--server', url, '--token', 'gpu_nope', '--data-dir', join(data_dir, 'empty')]);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /error\[E_UNAUTHORIZED\]/);
    const res = await fetch(`${url}/v1/jobs`);
    assert.equal(res.status, 401);
    const alice = (await server.client.createToken('alice')).token;
    const bob = (await server.client.createToken('bob')).token;
    const sub = await runCli([
      'submit',
      '--json',
      '--server',
      url,
      '--token',
      alice,
      '--',
      process.execPath,
      '-e',
      'setTimeout(() => {}, 20000)',
    ]);
    const id = (JSON.parse(sub.stdout) as { id: string; user: string }).id;
    const denied = await runCli(['cancel', id, '--server', url, '--token', bob]);
    assert.equal(denied.status, 1);
    assert.match(denied.stderr, /error\[E_NOT_FOUND\]: no job '[0-9a-f]+'/, "another user's job is not found");
    const bobLs = JSON.parse((await runCli(['ls', '--json', '--server', url, '--token', bob])).stdout) as unknown[];
    assert.equal(bobLs.length, 0);
    const ok = await runCli(['cancel', id, '--server', url, '--token', alice]);
    assert.equal(ok.status, 0, ok.stderr);
  });

  it(
    'cancels by filter in one call (--user, --state, --name; --json), another user only as admin',
    { timeout: CLI_TEST_LIMIT_MS },
    async () => {
      const url = server.url;
      const carol = (await server.client.createToken('carol')).token;
      for (let k = 0; k < 3; k++)
        await runCli([
          'submit',
          '--name',
          'flooded',
          '--server',
          url,
          '--token',
          carol,
          '--',
          process.execPath,
          '-e',
          'setTimeout(() => {}, 60000)',
        ]);
      const denied = await runCli(['cancel', '--user', 'admin', '--server', url, '--token', carol]);
      assert.equal(denied.status, 1);
      assert.match(denied.stderr, /error\[E_FORBIDDEN\]/);
      const both = await runCli(['cancel', 'x', '--state', 'queued', ...dd()]);
      assert.equal(both.status, 2, 'jobs and filters together are a usage error');
      const r = await runCli(['cancel', '--user', 'carol', '--name', 'flooded', '--json', ...dd()]);
      assert.equal(r.status, 0, r.stderr);
      const done = JSON.parse(r.stdout) as { cancelled: number; jobs: { user: string }[] };
      assert.equal(done.cancelled, 3);
      assert.ok(done.jobs.every((j) => j.user === 'carol'));
      const again = await runCli(['cancel', '--user', 'carol', '--state', 'active', ...dd()]);
      assert.equal(again.stdout.trim(), 'cancelled 0 job(s): none matched');
    },
  );
});
