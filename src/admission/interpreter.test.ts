/**
 * Issue 52: a pyenv or conda `python3` first on PATH may shadow the one with torch; admission
 * checks the interpreter a replica will run, where the backend runs replicas on the server's
 * machine (the local backend), and the submit's answer says so before the job fails. The
 * interpreter without torch is a real one: a venv of Debian's python3 without its system
 * site-packages.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { admitJob, readJobCode } from './admit.js';
import { interpreterNote } from './interpreter.js';
import { jobSpecFixture } from '../store/job-fixture.js';

const root = tempDataDir('goodput-interpreter-');
const bare = join(root, 'bare'); // python3 without torch
const workdir = join(root, 'work');
const SYSTEM = '/usr/bin:/bin';

before(() => {
  const made = spawnSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', bare], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  mkdirSync(workdir);
  writeFileSync(join(workdir, 'train.py'), 'import os\nimport torch\nprint(torch.__version__)\n');
  writeFileSync(join(workdir, 'plain.py'), 'print("no torch here")\n');
});
after(() => cleanup(root));

describe('interpreterNote', () => {
  type Spec = { command: string[]; workdir: string; venv?: string; env_setup?: string };
  const spec = (command: string[], extra: { venv?: string; env_setup?: string } = {}): Spec => ({
    command,
    workdir,
    ...extra,
  });
  // The script's text is admission's one read of it (admit.ts readJobCode).
  const note = (s: Spec, path: string) => interpreterNote(s, readJobCode(s).source, path);
  it('a python3 without torch first on PATH: warns, naming it and what to do', async () => {
    const warned = (await note(spec(['python3', 'train.py']), `${bare}/bin:${SYSTEM}`))!;
    assert.match(
      warned,
      new RegExp(
        `the replicas' python3 is ${bare}/bin/python3 \\(the first on the server's PATH\\), which has no torch, but .*train\\.py imports it`,
      ),
    );
    assert.match(warned, /--venv DIR .*\/usr\/bin\/python3 -m venv --system-site-packages/);
  });
  it("the job's venv without torch: warns that it comes from the venv", async () => {
    assert.match(
      (await note(spec(['python3', 'train.py'], { venv: bare }), SYSTEM))!,
      new RegExp(`is ${bare}/bin/python3 \\(from ${bare}\\)`),
    );
  });
  it('false friends: the python with torch, a script without torch, an env_setup step, no python at all', async () => {
    assert.equal(await note(spec(['python3', 'train.py']), SYSTEM), undefined, "Debian's python3 has torch");
    assert.equal(
      await note(spec(['/usr/bin/python3', 'train.py']), `${bare}/bin:${SYSTEM}`),
      undefined,
      'a full path is what runs',
    );
    assert.equal(
      await note(spec(['python3', 'plain.py']), `${bare}/bin:${SYSTEM}`),
      undefined,
      'the script needs no torch',
    );
    assert.equal(
      await note(spec(['python3', 'train.py'], { env_setup: 'setup.sh' }), `${bare}/bin:${SYSTEM}`),
      undefined,
      'the setup step may install it',
    );
    assert.equal(await note(spec(['sh', '-c', 'python3 train.py']), `${bare}/bin:${SYSTEM}`), undefined);
  });
  it('no python3 anywhere on the PATH: says the replicas would fail with 127', async () => {
    assert.match(
      (await note(spec(['python3.99', 'train.py']), SYSTEM))!,
      /no 'python3\.99' on the server's PATH.*exit 127/,
    );
  });
});

describe('admitJob', () => {
  it('checks the interpreter only where replicas run with a PATH known here (the local backend)', async () => {
    const job = jobSpecFixture({ command: ['python3', 'train.py'], workdir });
    const warned = await admitJob(job, [{ index: 0, kind: 'cpu', name: 'cpu-slot-0' }], `${bare}/bin:${SYSTEM}`);
    assert.ok(
      warned.notes.some((n) => /the replicas' python3 .* has no torch/.test(n)),
      warned.notes.join('\n'),
    );
    const elsewhere = await admitJob(job, [{ index: 0, kind: 'cpu', name: 'cpu-slot-0' }], undefined);
    assert.ok(!elsewhere.notes.some((n) => /has no torch/.test(n)), 'replicas on other machines: nothing to tell');
  });
});

describe(
  'goodput submit against a local server whose PATH starts with a python3 without torch',
  { timeout: 120_000 },
  () => {
    let server: ServerProcess | undefined;
    const data_dir = join(root, 'data');
    before(async () => {
      mkdirSync(data_dir);
      server = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '1'], {
        PATH: `${bare}/bin:${process.env.PATH ?? SYSTEM}`,
      });
    });
    after(() => cleanup(data_dir, server ? [server] : []));
    it('warns at submit, before the job fails', async () => {
      const out = await runCli(['submit', '--data-dir', data_dir, '--workdir', workdir, '--', 'python3', 'train.py']);
      assert.equal(out.status, 0, out.stderr);
      assert.match(
        out.stderr,
        /goodput: warning: the replicas' python3 is .*\/bare\/bin\/python3 .*which has no torch/,
      );
      const ok = await runCli([
        'submit',
        '--data-dir',
        data_dir,
        '--workdir',
        workdir,
        '--',
        '/usr/bin/python3',
        'train.py',
      ]);
      assert.doesNotMatch(ok.stderr, /has no torch/, 'false friend: the interpreter with torch');
    });
  },
);
