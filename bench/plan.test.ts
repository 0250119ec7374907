/**
 * bench:plan over a small synthetic trace directory: the --json output has exactly the shape the
 * issue asks for, and a type built by the model's own physics is predicted exactly.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = join(dirname(fileURLToPath(import.meta.url)), 'plan.js');
const dir = mkdtempSync(join(tmpdir(), 'goodput-plan-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const PLACEMENTS = ['1', '2', '4', '11', '22', '44'];
const BATCHES = [8, 16, 32];

/** A placements file of one application on one type: compute plus size x the type's sync time of the shape. */
function placements(
  speed: number,
  size: number,
  network: (nodes: number, replicas: number) => number,
  header: string,
): string {
  const rows = PLACEMENTS.flatMap((p) =>
    BATCHES.map((b) => {
      const nodes = p.length;
      const replicas = [...p].reduce((s, g) => s + Number(g), 0);
      const compute = (0.02 + 0.003 * b) / speed;
      const sync = replicas > 1 ? size * network(nodes, replicas) : 0.0001;
      const cells: Record<string, string> = {
        placement: p,
        local_bsz: String(b),
        step_time: String(compute + sync),
        sync_time: String(sync),
      };
      return header
        .split(',')
        .map((h) => cells[h])
        .join(',');
    }),
  );
  return `${header}\n${rows.join('\n')}\n`;
}

describe('bench:plan', () => {
  it('prints exactly {per_type, overall} with --json, and predicts a synthetic type exactly', () => {
    for (const [i, app] of ['alpha', 'beta', 'gamma', 'delta'].entries()) {
      mkdirSync(join(dir, app));
      const size = 0.2 + 0.3 * i;
      writeFileSync(
        join(dir, app, 'placements-slow.csv'),
        placements(1, size, (n, r) => (n > 1 ? 0.3 + 0.02 * r : 0.05 * r), 'placement,local_bsz,step_time,sync_time'),
      );
      writeFileSync(
        join(dir, app, 'placements-fast.csv'),
        placements(
          2 + i,
          size,
          (n, r) => (n > 1 ? 0.05 + 0.01 * r : 0.004 * r),
          'local_bsz,step_time,sync_time,placement',
        ),
      );
    }
    const run = spawnSync(process.execPath, [script, '--traces', dir, '--reference', 'slow', '--json'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout) as {
      per_type: Record<string, Record<string, { median_abs_pct_error: number }> & { interval_coverage_pct?: number }>;
      overall: Record<string, number>;
    };
    assert.deepEqual(Object.keys(out).sort(), ['all_types_interval_log', 'leave_one_type_out', 'overall', 'per_type']);
    assert.deepEqual(Object.keys(out.per_type), ['fast']);
    const { interval_coverage_pct: typeCoverage, ...apps } = out.per_type.fast ?? {};
    assert.deepEqual(Object.keys(apps).sort(), ['alpha', 'beta', 'delta', 'gamma']);
    for (const app of Object.values(apps)) assert.deepEqual(Object.keys(app), ['median_abs_pct_error']);
    // One type besides the reference: no held-in type to take an interval from, so no row is inside one.
    assert.equal(typeCoverage, 0);
    assert.deepEqual(Object.keys(out.overall).sort(), [
      'interval_coverage_pct',
      'median_abs_pct_error',
      'worst_app_abs_pct_error',
    ]);
    assert.equal(out.overall.worst_app_abs_pct_error, 0);
  });
});
