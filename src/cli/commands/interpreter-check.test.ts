/**
 * Issue 52: a pyenv or conda `python3` first on PATH may shadow the one with torch; submit now
 * checks the interpreter a replica will run, when the server is local, and says so before the
 * job fails. The interpreter without torch is a real one: a venv of Debian's python3 without
 * its system site-packages.
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
} from '../../../test-support/control/harness.js';
import { interpreterNote, serverPath } from './interpreter-check.js';

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
  const spec = (command: string[], extra: { venv?: string; env_setup?: string } = {}) => ({
    command,
    workdir,
    ...extra,
  });
  it('a python3 without torch first on PATH: warns, naming it and what to do', () => {
    const note = interpreterNote(spec(['python3', 'train.py']), `${bare}/bin:${SYSTEM}`)!;
    assert.match(
      note,
      new RegExp(
        `the replicas' python3 is ${bare}/bin/python3 \\(the first on the server's PATH\\), which has no torch, but .*train\\.py imports it`,
      ),
    );
    assert.match(note, /--venv DIR .*\/usr\/bin\/python3 -m venv --system-site-packages/);
  });
  it("the job's venv without torch: warns that it comes from the venv", () => {
    assert.match(
      interpreterNote(spec(['python3', 'train.py'], { venv: bare }), SYSTEM)!,
      new RegExp(`is ${bare}/bin/python3 \\(from ${bare}\\)`),
    );
  });
  it('false friends: the python with torch, a script without torch, an env_setup step, no python at all', () => {
    assert.equal(interpreterNote(spec(['python3', 'train.py']), SYSTEM), undefined, "Debian's python3 has torch");
    assert.equal(
      interpreterNote(spec(['/usr/bin/python3', 'train.py']), `${bare}/bin:${SYSTEM}`),
      undefined,
      'a full path is what runs',
    );
    assert.equal(
      interpreterNote(spec(['python3', 'plain.py']), `${bare}/bin:${SYSTEM}`),
      undefined,
      'the script needs no torch',
    );
    assert.equal(
      interpreterNote(spec(['python3', 'train.py'], { env_setup: 'setup.sh' }), `${bare}/bin:${SYSTEM}`),
      undefined,
      'the setup step may install it',
    );
    assert.equal(interpreterNote(spec(['sh', '-c', 'python3 train.py']), `${bare}/bin:${SYSTEM}`), undefined);
  });
  it('no python3 anywhere on the PATH: says the replicas would fail with 127', () => {
    assert.match(
      interpreterNote(spec(['python3.99', 'train.py']), SYSTEM)!,
      /no 'python3\.99' on the server's PATH.*exit 127/,
    );
  });
});

describe('serverPath', () => {
  it("reads a local server's PATH from its process; nothing for a remote one", () => {
    const dir = join(root, 'fake-data');
    mkdirSync(dir);
    writeFileSync(join(dir, 'server.json'), JSON.stringify({ url: 'http://127.0.0.1:7878', pid: process.pid }));
    assert.equal(serverPath(dir, 'http://127.0.0.1:7878'), process.env.PATH);
    assert.equal(serverPath(dir, 'http://10.1.2.3:7878'), undefined, 'a remote server');
    assert.equal(serverPath(dir, 'http://127.0.0.1:9999'), undefined, 'another server than server.json names');
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
