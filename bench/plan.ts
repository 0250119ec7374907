/**
 * How well a job's multi-GPU throughput on a GPU type is predicted before it runs there (the
 * planner's transferred predictions, docs/planner.md). Run:
 *   npm run bench:plan -- --traces DIR [--reference aws] [--json]
 * over a directory in the Sia trace format (<app>/placements-<type>.csv, scalability-<type>.csv).
 *
 * For every application A and every type T other than the reference, A's multi-GPU throughput
 * on T is predicted from A's full profile on the reference type, A's one-GPU rows on T, and the
 * other applications' measurements on T (leave one application out: what the cluster has learned
 * of T from other jobs), never A's own multi-GPU rows on T; then compared with those rows
 * (throughput = replicas x local batch / step time). Sia's one-GPU-ratio rule is the baseline,
 * on the rows where the placement exists on both types. Applications without reference rows are
 * listed and skipped. Deterministic.
 */
import { GoodputError } from '../src/core/errors.js';
import type { TypeMeasurement } from '../src/goodput/type-measurement.js';
import {
  computeTime_s,
  leftOutPredictor,
  oneGpuComputeCurve,
  oneGpuRatioStep_s,
  ruleLabel,
} from '../src/goodput/type-transfer.js';
import { readSiaTraces, type SiaApplication } from '../src/sim/sia-traces.js';
import { benchArgs } from './bench-args.js';

const USAGE = `
usage: npm run bench:plan -- --traces DIR [--reference TYPE] [--json]
Error of multi-GPU throughput predicted on a GPU type from the job's profile on the reference type
(default aws), its one-GPU rows there and the other applications' measurements there, per type and
application, beside Sia's one-GPU-ratio rule. DIR: a Sia-format trace directory, e.g.
../shared/data/sia/traces. --json prints {"per_type": {type: {app: {"median_abs_pct_error": e}}},
"overall": {"median_abs_pct_error": e, "worst_app_abs_pct_error": w}} (percent).
`;

interface AppResult {
  application: string;
  rows: number;
  /** Median |predicted / measured - 1| of throughput over the rows, fraction. */
  model: number;
  /** That error of every row (1 where the model cannot predict it). */
  errors: number[];
  /** The same for Sia's rule over the rows it can predict; NaN with none. */
  baseline: number;
  baseline_rows: number;
  /** The transfer model's median over the baseline's rows only (the like-for-like comparison). */
  model_on_baseline_rows: number;
  /** The rule learned from the other applications on the type. */
  rule: string;
}

const values = benchArgs(USAGE, {
  traces: { type: 'string' },
  reference: { type: 'string', default: 'aws' },
  json: { type: 'boolean', default: false },
});
if (values.traces === undefined) {
  console.error(`error: --traces DIR is required\n\n${USAGE.trim()}`);
  process.exit(2);
}

/** |predicted / measured - 1| of throughput: the measured step over the predicted step, minus 1. */
const absError = (measuredStep_s: number, predictedStep_s: number): number =>
  Math.abs(measuredStep_s / predictedStep_s - 1);

function evaluate(apps: readonly SiaApplication[], type: string, reference: string): AppResult[] {
  const withBoth = apps.filter((a) => a.byType.has(reference) && a.byType.has(type));
  return withBoth.map((a) => {
    const target = a.byType.get(type) as readonly TypeMeasurement[];
    const referenceRows = a.byType.get(reference) as readonly TypeMeasurement[];
    const others = withBoth
      .filter((o) => o !== a)
      .map((o) => ({
        reference: o.byType.get(reference) as readonly TypeMeasurement[],
        target: o.byType.get(type) as readonly TypeMeasurement[],
      }));
    const oneGpu = target.filter((m) => m.num_replicas === 1);
    const { predict, factors } = leftOutPredictor({ reference: referenceRows, target }, others);
    const multi = target.filter((m) => m.num_replicas > 1);
    const model: number[] = [];
    const baseline: number[] = [];
    const modelOnBaselineRows: number[] = [];
    for (const m of multi) {
      const step = predict?.(m.num_nodes, m.num_replicas, m.local_bsz);
      // A row the model cannot predict counts as 100% wrong rather than being dropped.
      const error = step === undefined ? 1 : absError(m.step_time_s, step);
      model.push(error);
      const sia = oneGpuRatioStep_s(m, referenceRows, oneGpu);
      if (sia === undefined) continue;
      baseline.push(absError(m.step_time_s, sia));
      modelOnBaselineRows.push(error);
    }
    return {
      application: a.name,
      rows: multi.length,
      model: median(model),
      errors: model,
      baseline: median(baseline),
      baseline_rows: baseline.length,
      model_on_baseline_rows: median(modelOnBaselineRows),
      rule: ruleLabel(factors.rule),
    };
  });
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-');
const round2 = (x: number): number => Math.round(10000 * x) / 100;

function main(): void {
  const { traces: dir, reference, json } = values as { traces: string; reference: string; json: boolean };
  const traces = readSiaTraces(dir);
  if (!traces.types.includes(reference))
    throw new GoodputError(
      'E_USAGE',
      `--reference ${reference}: no such type in ${dir} (types: ${traces.types.join(', ')})`,
      2,
    );
  const types = traces.types.filter((t) => t !== reference);
  const perType = types
    .map((type) => ({ type, results: evaluate(traces.applications, type, reference) }))
    .filter((t) => t.results.length > 0);
  const all = perType.flatMap((t) => t.results);
  if (all.length === 0)
    throw new GoodputError(
      'E_INPUT',
      `${dir}: no application has rows on ${reference} and on another type; nothing to predict`,
    );
  const overall = {
    median_abs_pct_error: round2(median(all.map((r) => r.model))),
    worst_app_abs_pct_error: round2(Math.max(...all.map((r) => r.model))),
  };
  if (json) {
    const per_type = Object.fromEntries(
      perType.map((t) => [
        t.type,
        Object.fromEntries(t.results.map((r) => [r.application, { median_abs_pct_error: round2(r.model) }])),
      ]),
    );
    console.log(JSON.stringify({ per_type, overall }, null, 2));
    return;
  }
  console.log(
    `Multi-GPU throughput on each type predicted from the ${reference} profile, the job's one-GPU rows on the type and the other applications' measurements there (leave one application out)`,
  );
  console.log(
    `median |predicted / measured - 1| per application; baseline: Sia's one-GPU-ratio rule where the placement exists on both types`,
  );
  console.log('');
  console.log(
    '| type | application | multi-GPU rows | transfer model | rule learned | rows on both types | Sia ratio rule | transfer model there |',
  );
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  const medianOf = (rs: readonly AppResult[], k: 'model' | 'baseline' | 'model_on_baseline_rows'): string =>
    pct(median(rs.map((r) => r[k]).filter(Number.isFinite)));
  for (const { type, results } of perType) {
    for (const r of results)
      console.log(
        `| ${type} | ${r.application} | ${r.rows} | ${pct(r.model)} | ${r.rule} | ${r.baseline_rows} | ${pct(r.baseline)} | ${pct(r.model_on_baseline_rows)} |`,
      );
    console.log(
      `| ${type} | median of applications | | ${medianOf(results, 'model')} | | | ${medianOf(results, 'baseline')} | ${medianOf(results, 'model_on_baseline_rows')} |`,
    );
  }
  const skipped = traces.applications.filter((a) => !a.byType.has(reference)).map((a) => a.name);
  if (skipped.length > 0) console.log(`\nskipped (no ${reference} profile to transfer from): ${skipped.join(', ')}`);
  const baselines = all.map((r) => r.baseline).filter(Number.isFinite);
  console.log('');
  console.log(
    `overall: median ${pct(overall.median_abs_pct_error / 100)}, worst application ${pct(overall.worst_app_abs_pct_error / 100)} (target <= 8% and <= 15%)`,
  );
  const rows = all.flatMap((r) => r.errors);
  console.log(
    `median over all ${rows.length} rows pooled instead of over the (type, application) pairs: ${(100 * median(rows)).toFixed(2)}%`,
  );
  const there = all.map((r) => r.model_on_baseline_rows).filter(Number.isFinite);
  printContention(traces.applications, traces.types);
  console.log('');
  console.log(
    `on the rows where the placement exists on both types: Sia's ratio rule median ${pct(median(baselines))}, worst application ${pct(Math.max(...baselines))}; transfer model median ${pct(median(there))}, worst ${pct(Math.max(...there))}`,
  );
}

/**
 * Diagnostic: per type and application, the median of a multi-GPU row's micro-step time (step
 * minus sync) over the job's one-GPU micro-step time at that batch, on one node with `gpus` GPUs.
 * A job whose compute slows down with its GPUs unlike the other jobs on the type cannot be
 * predicted from them, nor from a reference type where it does not.
 */
function printContention(apps: readonly SiaApplication[], types: readonly string[]): void {
  const gpus = [2, 4, 8];
  console.log('');
  console.log(
    `Why some applications are hard: multi-GPU micro-step over one-GPU micro-step at the same batch, one node with ${gpus.join(' / ')} GPUs (median)`,
  );
  console.log(`| type | ${apps.map((a) => a.name).join(' | ')} |`);
  console.log(`| --- | ${apps.map(() => '---:').join(' | ')} |`);
  for (const type of types) {
    const cells = apps.map((a) => {
      const rows = a.byType.get(type);
      const curve = rows && oneGpuComputeCurve(rows);
      if (!rows || !curve) return '-';
      return gpus
        .map((g) =>
          pct1(
            median(
              rows
                .filter((m) => m.num_nodes === 1 && m.num_replicas === g)
                .map((m) => computeTime_s(m) / curve(m.local_bsz)),
            ),
          ),
        )
        .join(' / ');
    });
    console.log(`| ${type} | ${cells.join(' | ')} |`);
  }
}

const pct1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : '-');

try {
  main();
} catch (error) {
  if (!(error instanceof GoodputError)) throw error;
  console.error(`error: ${error.message}`);
  process.exit(error.exitCode);
}
