/**
 * `npm run bench:unmeasured-calibration`: how wide a prediction's 80% interval must be where the job
 * measured nothing (issue #51; src/goodput/interval.ts UNMEASURED_SPREAD_PER_LOG). The policy's and
 * the batch decisions' intervals are the fit's residuals on its own points; at a configuration the
 * job never ran they understate the error. Here, per application of the Pollux traces, a job
 * "measures" a few configurations (three protocols, below), is fitted and corrected on them as the
 * control plane does (fitPerfParams, stepCorrection), and predicts the optimizer-step time of every
 * other configuration the traces measured (one node 1-4 GPUs at every batch of its grid; 2 and 4
 * whole nodes). Each held-out row needs its residual interval widened by k x d to contain it, d its
 * measuredDistance; the 80th percentile of that k over rows is the calibrated spread per unit of
 * distance. Printed: that k over all applications, and leave-one-application-out coverage (k from
 * the other applications, coverage on the one left out), with the coverage of the residuals alone.
 * ncf is left out of everything: the NCF-style job of bench:live-decisions is the held-out check.
 *   node dist/bench/unmeasured-calibration.js [--json]
 * Protocols: "1 GPU": one GPU at every third batch of the grid; "1+4 sparse": one and four GPUs at
 * every third batch; "1+4 one batch": one and four GPUs at the middle batch of the grid.
 */
import { fitPerfParams } from '../src/goodput/fit.js';
import {
  correctionInterval,
  MAX_UNMEASURED_SPREAD,
  measuredDistance,
  quantile,
  UNMEASURED_SPREAD_PER_LOG,
} from '../src/goodput/interval.js';
import { optimFactor, stepCorrection } from '../src/goodput/step-correction.js';
import { optimStepTime_s } from '../src/goodput/throughput.js';
import { applicationNames, getApplication, type TraceApplication } from '../src/sim/application.js';
import { defaultTracesDir } from '../src/sim/workload.js';
import { benchArgs } from './bench-args.js';
import { localBatchGrid, multiNodeMeasurements, oneNodeMeasurements, toPoint, type Measured } from './predict-data.js';

const USAGE = `
usage: node dist/bench/unmeasured-calibration.js [--json]
The spread per unit of log-distance that an 80% interval needs at configurations a job did not
measure, calibrated on the Pollux traces (ncf left out), with leave-one-application-out coverage.
`;
const values = benchArgs(USAGE, { json: { type: 'boolean', default: false } });

/** The application left out of the calibration: the held-out live job is NCF-style. */
const HELD_OUT = 'ncf';

/** One held-out row: its log error, residual interval and distance from the measured points. */
interface Row {
  app: string;
  protocol: string;
  err: number;
  lo: number;
  hi: number;
  d: number;
}

const key = (m: Measured): string => `${m.num_nodes}/${m.num_replicas}/${m.local_bsz}`;

/** What the job measured under each protocol. */
function protocols(app: TraceApplication, grid: readonly number[]): Record<string, Measured[]> {
  const mid = [grid[Math.floor(grid.length / 2)] as number];
  return {
    '1 GPU': oneNodeMeasurements(app, grid, [1], 3),
    '1+4 sparse': oneNodeMeasurements(app, grid, [1, 4], 3),
    '1+4 one batch': oneNodeMeasurements(app, mid, [1, 4]),
  };
}

function rowsOf(name: string): Row[] {
  const dir = defaultTracesDir();
  const app = getApplication(name, dir);
  if (!app) return [];
  const grid = localBatchGrid(app, dir);
  const all = [...oneNodeMeasurements(app, grid), ...multiNodeMeasurements(app, dir, grid, [2, 4])];
  const rows: Row[] = [];
  for (const [protocol, measured] of Object.entries(protocols(app, grid))) {
    if (measured.length < 2) continue;
    const points = measured.map(toPoint);
    const perf = fitPerfParams(points);
    const correction = stepCorrection(perf, points);
    const base = correctionInterval(correction);
    const seen = new Set(measured.map(key));
    for (const m of all) {
      if (seen.has(key(m))) continue;
      const predicted =
        optimStepTime_s(perf, m.num_nodes, m.num_replicas, m.local_bsz) *
        optimFactor(correction, m.num_nodes, m.num_replicas, m.local_bsz);
      rows.push({
        app: name,
        protocol,
        err: Math.log(m.step_time_s / predicted),
        lo: base.lo,
        hi: base.hi,
        d: measuredDistance(correction, m.num_nodes, m.num_replicas, m.local_bsz),
      });
    }
  }
  return rows;
}

/** The widening per unit of distance each row needs to be inside its interval (0 when inside already). */
function needed(r: Row): number {
  const out = Math.max(0, r.lo - r.err, r.err - r.hi);
  return out === 0 ? 0 : r.d > 0 ? out / r.d : Infinity;
}

/** Share of rows inside their residual interval widened by k x d (at most MAX_UNMEASURED_SPREAD, as the source does). */
function coverage(rows: readonly Row[], k: number): number {
  const w = (r: Row): number => Math.min(k * r.d, MAX_UNMEASURED_SPREAD);
  const inside = rows.filter((r) => r.err >= r.lo - w(r) && r.err <= r.hi + w(r)).length;
  return rows.length === 0 ? NaN : inside / rows.length;
}

/** The calibrated spread: the 80th percentile of the needed widening. */
const calibrate = (rows: readonly Row[]): number => quantile(rows.map(needed), 0.8);

const apps = applicationNames.filter((a) => a !== HELD_OUT);
const byApp = new Map(apps.map((a) => [a, rowsOf(a)]));
const rows = [...byApp.values()].flat();
const k = calibrate(rows);
const loo = apps.map((a) => {
  const others = apps.filter((b) => b !== a).flatMap((b) => byApp.get(b) ?? []);
  const kOthers = calibrate(others);
  const own = byApp.get(a) ?? [];
  return {
    app: a,
    rows: own.length,
    k_others: kOthers,
    coverage: coverage(own, kOthers),
    residuals_only: coverage(own, 0),
  };
});
const pooledLoo = loo.reduce((s, l) => s + l.coverage * l.rows, 0) / Math.max(1, rows.length);
const result = {
  held_out: HELD_OUT,
  rows: rows.length,
  spread_per_log: k,
  in_source: UNMEASURED_SPREAD_PER_LOG,
  coverage_all_rows: coverage(rows, k),
  coverage_in_source: coverage(rows, UNMEASURED_SPREAD_PER_LOG),
  coverage_residuals_only: coverage(rows, 0),
  leave_one_app_out: loo,
  leave_one_app_out_coverage: pooledLoo,
  by_protocol: [...new Set(rows.map((r) => r.protocol))].map((p) => {
    const sub = rows.filter((r) => r.protocol === p);
    return { protocol: p, rows: sub.length, coverage: coverage(sub, UNMEASURED_SPREAD_PER_LOG) };
  }),
};
if (values.json) console.log(JSON.stringify(result, null, 2));
else {
  const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
  console.log(`unmeasured configurations of the Pollux traces (${HELD_OUT} left out): ${rows.length} rows`);
  console.log(
    `calibrated spread per unit of log-distance: ${k.toFixed(3)} (source: UNMEASURED_SPREAD_PER_LOG = ${UNMEASURED_SPREAD_PER_LOG})`,
  );
  console.log(
    `80% intervals contain: residuals only ${pct(result.coverage_residuals_only)}, widened by the source's constant ${pct(result.coverage_in_source)}`,
  );
  console.log('leave one application out: app  rows  k(others)  coverage  (residuals only)');
  for (const l of loo)
    console.log(
      `  ${l.app.padEnd(12)} ${String(l.rows).padStart(5)}  ${l.k_others.toFixed(3).padStart(8)}  ${pct(l.coverage).padStart(8)}  (${pct(l.residuals_only)})`,
    );
  console.log(`  all, each with its k(others): ${pct(pooledLoo)}`);
  for (const p of result.by_protocol)
    console.log(`protocol ${p.protocol}: ${p.rows} rows, coverage with the source's constant ${pct(p.coverage)}`);
}
