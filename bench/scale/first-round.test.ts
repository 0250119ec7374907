import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./first-round.js', import.meta.url));
const root = resolve(fileURLToPath(import.meta.url), '../../../..');
const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

describe('bench/scale/first-round.js', () => {
  it('times every build given, a fresh process per run, on four types', () => {
    const r = run(
      '--types',
      '4',
      '--nodes',
      '32',
      '--jobs',
      '60',
      '--runs',
      '1',
      '--rounds',
      '2',
      '--builds',
      `${root},${root}`,
      '--json',
    );
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      gpus: number;
      builds: { root: string; all: [number | null, number, number][][]; first: { cpu_ms: { p50: number } } }[];
    };
    assert.equal(out.gpus, 128);
    assert.deepEqual(
      out.builds.map((b) => b.root),
      [root, root],
    );
    for (const b of out.builds) {
      assert.equal(b.all.length, 1, 'one process');
      assert.equal(b.all[0]!.length, 2, 'two rounds');
      for (const [main, cpu, wall] of b.all[0]!) {
        assert.ok(cpu > 0 && wall > 0);
        // The main thread is part of the process.
        if (main !== null) assert.ok(main <= cpu + 1, `main ${main} ms, process ${cpu} ms`);
      }
      assert.equal(
        b.first.cpu_ms.p50,
        Math.round(b.all[0]![0]![1] * 10) / 10,
        'one run: its first round is the median',
      );
    }
  });

  it("gives node's flags to the measured processes", () => {
    const args = ['--nodes', '8', '--jobs', '20', '--runs', '1', '--rounds', '1', '--json'];
    const r = spawnSync(process.execPath, ['--no-turbo-inlining', script, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as { node_flags: string[] }).node_flags, ['--no-turbo-inlining']);
    const plain = JSON.parse(run(...args).stdout) as { node_flags: string[] };
    assert.deepEqual(plain.node_flags, []);
  });

  it('refuses a directory that is not a built checkout, and bad flags, with exit code 2', () => {
    const notBuilt = run('--builds', '/nonexistent-build');
    assert.equal(notBuilt.status, 2);
    assert.match(notBuilt.stderr, /not a built checkout/);
    assert.match(run('--types', '2').stderr, /--types must be 1 or 4/);
    assert.equal(run('--types', '4', '--nodes', '40').status, 2);
  });
});
