/**
 * `goodput view`: recorded simulations of two policies served by the real CLI and checked in
 * chromium (summary rows, CDF points, one timeline per run), plus the slot assignment that
 * turns per-node allocations into GPU rows.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CLI, killOwnGroup, waitFor } from '../../test-support/control/harness.js';
import { packagePath } from '../util/package-root.js';
import { loadSimRuns, runLabels } from './sim-runs.js';
import { launchBrowser, screenshotDir } from './testing/browser.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-view-'));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) killOwnGroup(c.pid!, dir);
  rmSync(dir, { recursive: true, force: true });
});

const record = (timestamp: number, jobs: [string, number[], number | null][]) =>
  JSON.stringify({
    timestamp,
    num_nodes: 2,
    gpus_per_node: 2,
    jobs: jobs.map(([name, allocation, completion_time]) => ({
      name,
      allocation,
      submission_time: 0,
      completion_time,
    })),
  });

describe('simulation runs', () => {
  it('keeps a job on its GPUs while its count on the node does not shrink, and computes JCTs and utilization', () => {
    const file = join(dir, 'tiny.jsonl');
    writeFileSync(
      file,
      [
        record(60, [['a', [0], null]]),
        record(120, [
          ['a', [0], null],
          ['b', [0, 1, 1], null],
        ]),
        record(180, [
          ['a', [], 150],
          ['b', [0, 0, 1], null],
        ]),
      ].join('\n') + '\n',
    );
    const [run] = loadSimRuns([file]);
    assert.equal(run!.label, 'tiny');
    assert.deepEqual(run!.jct_s, [150]);
    assert.deepEqual(run!.util, [0.25, 1, 0.75]);
    const t = run!.timeline;
    const bands = t.row.map(
      (row, i) => `${t.labels[t.job[i]!]}@${t.rows[row]}:${t.start_ms[i]! / 1000}-${t.end_ms[i]! / 1000}`,
    );
    // a keeps n0/g0 until it completes; b keeps its GPUs and takes n0/g0 once a is gone.
    assert.deepEqual(
      bands.sort(),
      ['a@n0/g0:60-180', 'b@n0/g0:180-240', 'b@n0/g1:120-240', 'b@n1/g0:120-240', 'b@n1/g1:120-180'].sort(),
    );
  });

  it('labels runs by file name, or by folder and name when names repeat', () => {
    assert.deepEqual(runLabels(['/r/goodput/w-1.jsonl', '/r/tiresias/w-1.jsonl']), ['goodput/w-1', 'tiresias/w-1']);
    assert.deepEqual(runLabels(['/r/a.jsonl', '/r/b.jsonl']), ['a', 'b']);
  });

  it('rejects a file that is not an interval log with its name and line', () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, record(60, []) + '\n{"timestamp": "x"}\n');
    assert.throws(() => loadSimRuns([file]), /bad\.jsonl:2: not an interval record/);
  });

  it('goodput view shows two policies side by side in chromium', { timeout: 90_000 }, async () => {
    const workload = packagePath('data', 'pollux', 'workloads-0.5', 'workload-2.csv');
    const files = [];
    for (const policy of ['goodput', 'tiresias']) {
      const r = spawnSync(
        process.execPath,
        [CLI, 'sim', '--policy', policy, '--workload', workload, '--out', join(dir, policy)],
        { encoding: 'utf8' },
      );
      assert.equal(r.status, 0, r.stderr);
      files.push(join(dir, policy, 'workload-2.jsonl'));
    }
    const child = spawn(process.execPath, [CLI, 'view', ...files, '--port', '0'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const url = await waitFor('goodput view to serve', 20_000, async () => /(http:\/\/\S+)\/#\/sim/.exec(out)?.[1]);
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${url}/#/sim`);
      await page.waitForSelector('.run .timeline canvas');
      const rows = await page.locator('#sim-summary tbody tr').allInnerTexts();
      assert.equal(rows.length, 2);
      assert.match(rows[0]!, /^\s*goodput\/workload-2\s+16 x 4 GPUs\s+80\s/);
      assert.match(rows[1]!, /^\s*tiresias\/workload-2\s+16 x 4 GPUs\s+80\s/);
      assert.ok(
        Number(await page.locator('.chart[data-title^="Job completion time"]').getAttribute('data-points')) >= 80,
        'CDF has a point per job',
      );
      for (const canvas of await page.locator('.run .timeline canvas').all()) {
        assert.equal(await canvas.getAttribute('data-rows'), '64');
        assert.ok(Number(await canvas.getAttribute('data-bands')) > 10);
      }
      await page.screenshot({ path: join(screenshotDir(), 'sim.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
