/**
 * CLI conventions through the compiled CLI: did-you-mean for commands and flags, the hint for a
 * command forgotten behind a missing `--`, a command quoted into one argument, short flags,
 * `-V`, `up -d` + `down`, cancel of a finished job, and completion scripts run by real bash and
 * zsh (zsh driven through a pseudo-terminal, as a user presses TAB).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isAlive } from '../backends/local/process-info.js';
import { CLI, cleanup, runCli, tempDataDir, waitFor } from '../../test-support/control/harness.js';

const root = tempDataDir('goodput-cli-');
const data_dir = join(root, 'data');
after(() => {
  spawnSync(process.execPath, [CLI, 'down', '--data-dir', data_dir], { timeout: 40_000 });
  cleanup(data_dir);
  cleanup(root);
});

describe('CLI conventions', () => {
  it('suggests the closest command and flag', async () => {
    const cmd = await runCli(['sumbit']);
    assert.equal(cmd.status, 2);
    assert.match(cmd.stderr, /unknown command 'sumbit'\. Did you mean 'submit'\?/);
    const flag = await runCli(['submit', '--max-replica', '3', '--', 'python3', 'train.py']);
    assert.equal(flag.status, 2);
    assert.match(flag.stderr, /Unknown option '--max-replica'\. Did you mean '--max-replicas'\?/);
    const far = await runCli(['ls', '--frobnicate']);
    assert.doesNotMatch(far.stderr, /Did you mean/);
  });

  it("says `-- python ...` when the command comes without '--', instead of reading it as a spec", async () => {
    const r = await runCli(['submit', '-J', 'digits', 'python3', 'train.py', '--epochs', '3']);
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /'python3' is not a job spec file .*did you mean `goodput submit -J digits -- python3 train.py --epochs 3`\?/,
    );
    assert.doesNotMatch(r.stderr, /YAML/);
    const both = await runCli(['submit', 'job.yaml', 'python3', 'train.py']);
    assert.match(
      both.stderr,
      /'python3' is not an option\. .*did you mean `goodput submit job\.yaml -- python3 train\.py`\?/,
    );
    const script = await runCli(['submit', 'train.py']);
    assert.match(script.stderr, /did you mean `goodput submit -- train.py`\?/);
    const run = await runCli(['run', '-n', '2', 'python3', 'x.py']);
    assert.match(run.stderr, /did you mean `goodput run -n 2 -- python3 x.py`\?/);
  });

  it('refuses a whole command quoted as one argument, showing it unquoted', async () => {
    const r = await runCli(['submit', '--data-dir', data_dir, '--', 'python3 train.py --lr 0.1']);
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /the command is one argument, 'python3 train\.py --lr 0\.1'.* -- python3 train\.py --lr 0\.1 /,
    );
  });

  it('refuses a port out of range, a --policy-thread that is not on/off/auto and a server address that is not an http(s) URL as usage errors, naming their source', async () => {
    const port = await runCli(['up', '--data-dir', join(root, 'never'), '--cpu-slots', '1', '--port', '99999']);
    assert.equal(port.status, 2, port.stderr);
    assert.match(port.stderr, /E_USAGE.*up: --port must be an integer from 0 to 65535, got '99999'/);
    const env = await runCli(['up', '--data-dir', join(root, 'never'), '--cpu-slots', '1'], { GOODPUT_PORT: 'abc' });
    assert.match(env.stderr, /up: GOODPUT_PORT must be an integer from 0 to 65535, got 'abc'/);
    const thread = await runCli([
      'up',
      '--data-dir',
      join(root, 'never'),
      '--cpu-slots',
      '1',
      '--policy-thread',
      'yes',
    ]);
    assert.equal(thread.status, 2, thread.stderr);
    assert.match(thread.stderr, /E_USAGE.*up: --policy-thread: 'yes' is not on, off or auto/);
    const flag = await runCli(['ls', '--server', 'ftp://x']);
    assert.equal(flag.status, 2);
    assert.match(flag.stderr, /--server 'ftp:\/\/x' is not an http\(s\) URL/);
    const fromEnv = await runCli(['ls'], { GOODPUT_SERVER: 'localhost:7878' });
    assert.match(fromEnv.stderr, /GOODPUT_SERVER 'localhost:7878' is not an http\(s\) URL/);
    assert.doesNotMatch(fromEnv.stderr, /start it with 'goodput up'/);
  });

  it('prints the version with -V and --version', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['-V', '--version']) assert.equal((await runCli([flag])).stdout.trim(), pkg.version);
  });

  it(
    'up -d starts a server, short flags submit, cancel of a finished job says so, down stops it',
    { timeout: 90_000 },
    async () => {
      const up = await runCli(['up', '-d', '--data-dir', data_dir, '--cpu-slots', '2', '--interval-s', '1'], {
        GOODPUT_PORT: '0',
      });
      assert.equal(up.status, 0, up.stderr);
      const pid = (JSON.parse(readFileSync(join(data_dir, 'server.json'), 'utf8')) as { pid: number }).pid;
      const sub = await runCli([
        'submit',
        '-J',
        'quick',
        '-n',
        '2',
        '-e',
        'GREETING=hi',
        '--json',
        '--data-dir',
        data_dir,
        '--',
        process.execPath,
        '-e',
        'console.log(process.env.GREETING)',
      ]);
      assert.equal(sub.status, 0, sub.stderr);
      const job = JSON.parse(sub.stdout) as {
        id: string;
        name: string;
        spec: { max_replicas: number; env: Record<string, string> };
      };
      assert.deepEqual([job.name, job.spec.max_replicas, job.spec.env], ['quick', 2, { GREETING: 'hi' }]);
      await waitFor(
        'the job to succeed',
        30_000,
        async () =>
          JSON.parse((await runCli(['show', job.id, '--json', '--data-dir', data_dir])).stdout).state === 'succeeded',
      );
      const cancel = await runCli(['cancel', 'quick', '--data-dir', data_dir]);
      assert.equal(cancel.status, 1);
      assert.match(
        cancel.stderr,
        new RegExp(
          `error\\[E_CONFLICT\\]: job ${job.id} \\(quick\\) already succeeded at \\S+; there is nothing to cancel`,
        ),
      );
      assert.doesNotMatch(cancel.stderr, /cannot cancelled/);
      // A job that has not started says so in place of a log; one cancel takes several jobs.
      const sleeper = [process.execPath, '-e', 'setTimeout(() => {}, 60000)'];
      const ids: string[] = [];
      const submitLong = async (name: string) =>
        ids.push(
          (
            JSON.parse(
              (
                await runCli([
                  'submit',
                  '-J',
                  name,
                  '-n',
                  '2',
                  '--min-replicas',
                  '2',
                  '--json',
                  '--data-dir',
                  data_dir,
                  '--',
                  ...sleeper,
                ])
              ).stdout,
            ) as { id: string }
          ).id,
        );
      await submitLong('long1'); // needs both slots
      await waitFor(
        'long1 to run',
        30_000,
        async () =>
          JSON.parse((await runCli(['show', 'long1', '--json', '--data-dir', data_dir])).stdout).state === 'running',
      );
      await submitLong('long2'); // queued behind it
      const queued = await runCli(['logs', 'long2', '--data-dir', data_dir]);
      assert.equal(queued.status, 0, queued.stderr);
      assert.equal(queued.stdout, '');
      assert.match(
        queued.stderr,
        /job long2 is queued: replica 0 has written no log yet \(its log appears once it runs; -f waits for it\)/,
      );
      const many = await runCli(['cancel', 'long1', 'long2', 'nosuchjob', '--data-dir', data_dir]);
      assert.equal(many.status, 1, 'one of them could not be cancelled');
      assert.match(many.stdout, new RegExp(`cancelled job ${ids[0]} \\(long1\\)\ncancelled job ${ids[1]} \\(long2\\)`));
      assert.match(many.stderr, /nosuchjob: error\[E_NOT_FOUND\]/);
      const down = await runCli(['down', '--data-dir', data_dir]);
      assert.equal(down.status, 0, down.stderr);
      assert.match(down.stdout, new RegExp(`stopped the goodput server \\(pid ${pid}\\)`));
      assert.equal(isAlive(pid, ''), false);
      assert.equal(existsSync(join(data_dir, 'server.json')), false);
      const again = await runCli(['down', '--data-dir', data_dir]);
      assert.equal(again.status, 0);
      assert.match(again.stdout, /no goodput server is running/);
    },
  );

  it('down leaves alone a process that took over the pid of a server killed with -9', async () => {
    const stale = join(root, 'stale');
    mkdirSync(stale);
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(join(stale, 'server.json'), JSON.stringify({ url: 'http://127.0.0.1:1', pid: other.pid }));
      writeFileSync(join(stale, 'server.pid'), `${other.pid}\n`);
      const down = await runCli(['down', '--data-dir', stale]);
      assert.equal(down.status, 0, down.stderr);
      assert.match(down.stdout, /no goodput server is running/);
      assert.equal(isAlive(other.pid!, ''), true);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('completes commands and flags in bash', async () => {
    const script = (await runCli(['completion', 'bash'])).stdout;
    const complete = (words: string[]) => {
      const line = `source /dev/stdin <<'EOF'\n${script}\nEOF\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _goodput; printf '%s\\n' "\${COMPREPLY[@]}"`;
      return spawnSync('/bin/bash', ['-c', line], { encoding: 'utf8' }).stdout.trim().split('\n');
    };
    assert.deepEqual(complete(['goodput', 'sub']), ['submit']);
    assert.deepEqual(complete(['goodput', 'submit', '--max-r']), ['--max-replicas', '--max-restarts']);
    assert.ok(complete(['goodput', 'up', '--']).includes('--interval-s'));
    assert.deepEqual(complete(['goodput', 'completion', '--he']), ['--help']);
  });

  it('completes commands and flags in zsh, sourced and autoloaded from $fpath', { timeout: 60_000 }, async (t) => {
    if (spawnSync('zsh', ['-c', 'zmodload zsh/zpty'], { encoding: 'utf8' }).status !== 0) {
      t.skip(
        'zsh with zsh/zpty is not installed (scripts/test-packages.txt lists zsh; bash scripts/test.sh installs it)',
      );
      return;
    }
    const fpath = join(root, 'zfunctions');
    mkdirSync(fpath);
    writeFileSync(join(fpath, '_goodput'), (await runCli(['completion', 'zsh'])).stdout);
    for (const load of [
      `fpath=(${fpath} $fpath); autoload -Uz compinit; compinit -u -D`,
      `autoload -Uz compinit; compinit -u -D; source ${fpath}/_goodput`,
    ]) {
      for (const [typed, want] of [
        ['goodput sub', /^goodput submit +END$/m],
        ['goodput submit --max-rep', /^goodput submit --max-replicas +END$/m],
      ] as const) {
        // Types the line and TAB in an interactive zsh, then echoes the completed line.
        const driver = [
          'zmodload zsh/zpty',
          "zpty -b z 'zsh -f -i'",
          `zpty -w z 'PS1="%% "; bindkey -e; ${load}; function goodput { }'`, // emacs keys: $EDITOR=vi (npm sets it) would pick vi's
          `zpty -w -n z $'${typed}\\t'`,
          'sleep 2',
          "zpty -w z $'\\x01echo \\x05 END'",
          'sleep 1',
          "out=''; while zpty -r -t z line; do out+=$line; done; print -r -- $out; zpty -d z",
        ].join('\n');
        const r = spawnSync('zsh', ['-f', '-c', driver], { encoding: 'utf8', timeout: 20_000 });
        assert.match(r.stdout.replace(/\r/g, ''), want, `${load} / ${typed}`);
      }
    }
  });
});
