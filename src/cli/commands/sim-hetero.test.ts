import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';

// End-to-end: the compiled CLI on the Sia artifact's traces (beside the checkout).
const cli = packagePath('dist', 'src', 'cli', 'main.js');
const dataDir = [packagePath('..', 'shared', 'data', 'sia'), packagePath('..', '..', 'shared', 'data', 'sia')].find(
  (d) => existsSync(join(d, 'traces')),
);
const tmp = mkdtempSync(join(tmpdir(), 'goodput-sim-hetero-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe(
  'goodput sim / compare --cluster (end to end)',
  { skip: dataDir === undefined ? 'no ../shared/data/sia' : false },
  () => {
    const cluster = 'aws:2x4,rtx:1x8,dgx-ext:1x8';
    const workload = () => {
      const lines = readFileSync(join(dataDir!, 'workloads', 'philly', 'workload-1.csv'), 'utf8')
        .split('\n')
        .slice(0, 9);
      const path = join(tmp, 'small.csv');
      writeFileSync(path, lines.join('\n') + '\n');
      return path;
    };

    it('sim --json prints the per-workload metrics of the homogeneous simulator', () => {
      const r = run(
        'sim',
        '--policy',
        'sia',
        '--cluster',
        cluster,
        '--traces',
        join(dataDir!, 'traces'),
        '--workload',
        workload(),
        '--json',
      );
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout) as {
        policy: string;
        workloads: Record<string, Record<string, number>>;
        mean_avg_jct_s: number;
      };
      assert.equal(out.policy, 'sia');
      const w = out.workloads['small']!;
      for (const k of ['avg_jct_s', 'p99_jct_s', 'gpu_hours', 'makespan_s'])
        assert.ok(typeof w[k] === 'number' && w[k]! > 0, k);
      assert.equal(out.mean_avg_jct_s, w['avg_jct_s']);
    });

    it('compare runs the typed policies; errors are one line without a stack', () => {
      const r = run(
        'compare',
        '--cluster',
        cluster,
        '--traces',
        join(dataDir!, 'traces'),
        '--workload',
        workload(),
        '--policies',
        'goodput,sia',
        '--json',
      );
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { policies: Record<string, { avg_jct_s: number }> };
      assert.deepEqual(Object.keys(out.policies), ['goodput', 'sia']);
      const bad = run(
        'sim',
        '--policy',
        'fifo',
        '--cluster',
        cluster,
        '--traces',
        join(dataDir!, 'traces'),
        '--workload',
        workload(),
      );
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /policy 'fifo' does not run on a mixed cluster/);
      assert.doesNotMatch(bad.stderr, /\n\s+at /);
      const badSpec = run(
        'sim',
        '--policy',
        'sia',
        '--cluster',
        'aws:4',
        '--traces',
        join(dataDir!, 'traces'),
        '--workload',
        workload(),
      );
      assert.equal(badSpec.status, 2);
      assert.match(badSpec.stderr, /'aws:4' is not TYPE:NODESxGPUS/);
    });
  },
);
