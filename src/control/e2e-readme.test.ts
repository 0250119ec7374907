/**
 * README.md's "A local cluster" block, run line by line as written (extracted from the README, so
 * the two cannot drift): a venv on Debian's python3, `goodput up --detach`, the digits example
 * submitted into that venv, `ls`/`logs -f`, `show`, `down`. A `python3` without torch comes first
 * on PATH, as on the machine the issue was found on; the job must still succeed, grow or shrink
 * with a reason and change its batch size with a reason within a minute of its submission.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { packagePath } from '../util/package-root.js';
import { CLI, cleanup, tempDataDir } from '../../test-support/control/harness.js';

/** The lines of the fenced block under `heading` in README.md. */
export function readmeBlock(heading: string): string[] {
  const text = readFileSync(packagePath('README.md'), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `README.md has no heading '${heading}'`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(start))!;
  return block[1]!.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
}

function run(
  line: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeout_ms: number,
): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/bash', ['-euo', 'pipefail', '-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout_ms);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, out });
    });
  });
}

const root = tempDataDir('goodput-readme-');
const data_dir = join(root, 'data');
after(() => {
  spawnSync(process.execPath, [CLI, 'down', '--data-dir', data_dir], { timeout: 40_000 });
  cleanup(data_dir);
  cleanup(root);
});

describe('README quick start: a local cluster', () => {
  it(
    'works as written and the job rescales and changes batch size with reasons within a minute',
    { timeout: 420_000 },
    async () => {
      const torch = spawnSync('/usr/bin/python3', ['-c', 'import torch, sklearn'], { encoding: 'utf8' });
      assert.equal(
        torch.status,
        0,
        `the README's environment is Debian's /usr/bin/python3 with python3-torch and python3-sklearn (bash scripts/test.sh installs them): ${torch.stderr}`,
      );
      const bin = join(root, 'bin');
      mkdirSync(bin);
      writeFileSync(
        join(bin, 'goodput'),
        `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`,
      );
      writeFileSync(
        join(bin, 'python3'),
        '#!/bin/sh\necho "python3 without torch (first on PATH, as on a machine with pyenv)" >&2\nexit 1\n',
      );
      for (const f of ['goodput', 'python3']) chmodSync(join(bin, f), 0o755);
      // A checkout without .venv: the README's relative paths (examples/, .venv) resolve here.
      const cwd = join(root, 'checkout');
      mkdirSync(cwd);
      for (const d of ['examples', 'python']) symlinkSync(packagePath(d), join(cwd, d));
      const env = {
        ...process.env,
        PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
        GOODPUT_DATA_DIR: data_dir,
        GOODPUT_PORT: '0',
      };
      const outputs: string[] = [];
      for (const line of readmeBlock('### A local cluster')) {
        const r = await run(line, cwd, env, 300_000);
        outputs.push(`$ ${line}\n${r.out}`);
        assert.equal(r.status, 0, outputs.join('\n'));
      }
      const all = outputs.join('\n');
      assert.match(all, /accuracy=0\.9[5-9]/, 'the job trained to >= 95% test accuracy');
      assert.match(all, /^state\s+succeeded/m, all);
      assert.match(all, /^batch\s+\d+ = \d+ local x \d+ accumulation steps? x \d+ replicas?/m, all);
      assert.match(all, /^speedup\s+/m);
      assert.match(all, /stopped the goodput server/);
      assert.equal(existsSync(join(data_dir, 'server.json')), false, 'down stopped the server cleanly');
      assert.equal(existsSync(join(data_dir, 'server.pid')), false, 'down stopped the server cleanly');
      const store = new SqliteStore(join(data_dir, 'goodput.sqlite'), { background_checkpoint_ms: 0 });
      try {
        const [job] = await store.listJobs();
        const events = await store.listEvents(job!.id);
        const within = (kind: string, reason: RegExp) =>
          events.find((e) => e.kind === kind && reason.test(e.reason) && e.at_ms - job!.submitted_at_ms < 60_000);
        const trail = events.map((e) => `${e.kind}: ${e.reason}`).join('\n');
        assert.ok(
          within('rescale', /^(grew|shrank) \d+ -> \d+ \(goodput: .+\); checkpoint-restart$/),
          `no rescale with a reason within a minute:\n${trail}`,
        );
        assert.ok(
          within(
            'batch-size',
            /^batch size (grew|shrank|reshaped) \d+ -> \d+ \(\d+ x \d+ x \d+, local x accumulation x replicas\), learning rate x[\d.]+ \([^)]+\): /,
          ),
          `no batch-size change with a reason within a minute:\n${trail}`,
        );
      } finally {
        await store.close();
      }
    },
  );
});
