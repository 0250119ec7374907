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
 *
 * Two protocols (docs/planner.md): in-sample (the model's knobs as set, after being scored on
 * these same types) and leave one type out: for each non-reference type T in turn, the contention
 * thresholds are chosen among VARIANTS on the other non-reference types only (lowest mean of the
 * applications' median errors there) and scored on T. Each prediction carries an 80% interval:
 * the 10th and 90th percentiles of log(measured / predicted step) over the rows of the other
 * types (never T's); the calibration is the share of T's rows inside it.
 */
import { GoodputError } from '../src/core/errors.js';
import type { TypeMeasurement } from '../src/goodput/type-measurement.js';
import {
  applyInterval,
  chooseVariant,
  insideInterval,
  logErrorInterval,
  type LogInterval,
} from './type-calibration.js';
import { type ContentionKnobs, DEFAULT_CONTENTION } from '../src/goodput/type-contention.js';
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
  /** log(measured / predicted step) of every row; undefined where the model cannot predict it. */
  logErrors: (number | undefined)[];
}

/**
 * The knob settings the leave-one-type-out protocol chooses from: the contention thresholds as
 * set (first: ties keep them), each part off, and each threshold halved and doubled.
 */
const VARIANTS: readonly { label: string; knobs: ContentionKnobs }[] = [
  { label: 'as set (0.1, 0.75)', knobs: DEFAULT_CONTENTION },
  { label: 'host-bound 0.05', knobs: { ...DEFAULT_CONTENTION, host_bound_contention: 0.05 } },
  { label: 'host-bound 0.2', knobs: { ...DEFAULT_CONTENTION, host_bound_contention: 0.2 } },
  { label: 'no host-bound contention', knobs: { ...DEFAULT_CONTENTION, host_bound_contention: Infinity } },
  { label: 'host-limited 0.5', knobs: { ...DEFAULT_CONTENTION, host_limited_share: 0.5 } },
  { label: 'no host-limited floor', knobs: { ...DEFAULT_CONTENTION, host_limited_share: Infinity } },
];

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

function evaluate(
  apps: readonly SiaApplication[],
  type: string,
  reference: string,
  knobs: ContentionKnobs = DEFAULT_CONTENTION,
): AppResult[] {
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
    const { predict, factors } = leftOutPredictor({ reference: referenceRows, target }, others, knobs);
    const multi = target.filter((m) => m.num_replicas > 1);
    const model: number[] = [];
    const baseline: number[] = [];
    const modelOnBaselineRows: number[] = [];
    const logErrors: (number | undefined)[] = [];
    for (const m of multi) {
      const step = predict?.(m.num_nodes, m.num_replicas, m.local_bsz);
      logErrors.push(step === undefined ? undefined : Math.log(m.step_time_s / step));
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
      logErrors,
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
  const inSample = perType.map((t) => ({
    ...t,
    calibration: calibrate(
      t.results,
      perType.filter((o) => o !== t).flatMap((o) => o.results),
    ),
  }));
  const loto = leaveOneTypeOut(traces.applications, perType, reference);
  const lotoAll = loto.flatMap((t) => t.results);
  const coverage = (cs: readonly Calibration[]): number =>
    round2(
      cs.reduce((n, c) => n + c.inside, 0) /
        Math.max(
          cs.reduce((n, c) => n + c.rows, 0),
          1,
        ),
    );
  const overall = {
    median_abs_pct_error: round2(median(all.map((r) => r.model))),
    worst_app_abs_pct_error: round2(Math.max(...all.map((r) => r.model))),
    interval_coverage_pct: coverage(inSample.map((t) => t.calibration)),
  };
  const lotoOverall = {
    median_abs_pct_error: round2(median(lotoAll.map((r) => r.model))),
    worst_app_abs_pct_error: round2(Math.max(...lotoAll.map((r) => r.model))),
    interval_coverage_pct: coverage(loto.map((t) => t.calibration)),
  };
  const pooled = logErrorInterval(all.flatMap((r) => r.logErrors.filter((e): e is number => e !== undefined)));
  if (json) {
    const per_type = Object.fromEntries(
      inSample.map((t) => [
        t.type,
        {
          ...Object.fromEntries(t.results.map((r) => [r.application, { median_abs_pct_error: round2(r.model) }])),
          interval_coverage_pct: coverage([t.calibration]),
        },
      ]),
    );
    const lotoPerType = Object.fromEntries(
      loto.map((t) => [
        t.type,
        {
          knobs_chosen_on_held_in_types: t.variant,
          held_in_scores_pct: Object.fromEntries(VARIANTS.map((v, i) => [v.label, round2(t.scores[i] as number)])),
          median_abs_pct_error: round2(median(t.results.map((r) => r.model))),
          worst_app_abs_pct_error: round2(Math.max(...t.results.map((r) => r.model))),
          interval_coverage_pct: coverage([t.calibration]),
          interval_pct: t.calibration.interval && applyInterval(1, t.calibration.interval).map((x) => round2(x - 1)),
          per_app: Object.fromEntries(t.results.map((r) => [r.application, { median_abs_pct_error: round2(r.model) }])),
        },
      ]),
    );
    const all_types_interval_log = pooled && [pooled.lo, pooled.hi].map((x) => Math.round(1e4 * x) / 1e4);
    console.log(
      JSON.stringify(
        {
          per_type,
          overall,
          leave_one_type_out: { per_type: lotoPerType, overall: lotoOverall },
          all_types_interval_log,
        },
        null,
        2,
      ),
    );
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
  printCalibration('in-sample knobs', inSample, overall.interval_coverage_pct);
  printLoto(loto, lotoOverall);
  if (pooled)
    console.log(
      `\n80% interval of log(measured / predicted step) over all ${reference}-transferred rows of all types: [${pooled.lo.toFixed(4)}, ${pooled.hi.toFixed(4)}] (the planner's TRANSFER_LOG_INTERVAL)`,
    );
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

interface Calibration {
  /** Left-out rows inside the interval, and all of them (rows not predicted count as outside). */
  inside: number;
  rows: number;
  interval: LogInterval | undefined;
}

/** The 80% interval from `heldIn`'s log errors, and how many of `leftOut`'s rows it contains. */
function calibrate(leftOut: readonly AppResult[], heldIn: readonly AppResult[]): Calibration {
  const interval = logErrorInterval(heldIn.flatMap((r) => r.logErrors.filter((e): e is number => e !== undefined)));
  const rows = leftOut.flatMap((r) => r.logErrors);
  return { inside: interval ? rows.filter((e) => insideInterval(e, interval)).length : 0, rows: rows.length, interval };
}

interface LotoType {
  type: string;
  variant: string;
  results: AppResult[];
  calibration: Calibration;
  /** Each variant's score on the held-in types (mean of the applications' median errors), in VARIANTS' order. */
  scores: number[];
}

/**
 * The leave-one-type-out protocol: every variant evaluated on every type (leave one application
 * out within it, as in-sample); for each type, the variant with the lowest mean of the
 * applications' median errors on the other types, scored on it, with its interval from the other
 * types' errors under that variant. With one type, nothing is held in: the knobs as set.
 */
function leaveOneTypeOut(
  apps: readonly SiaApplication[],
  inSample: readonly { type: string; results: AppResult[] }[],
  reference: string,
): LotoType[] {
  const types = inSample.map((t) => t.type);
  const byVariant = VARIANTS.map(
    (v, i) => new Map(inSample.map((t) => [t.type, i === 0 ? t.results : evaluate(apps, t.type, reference, v.knobs)])),
  );
  return types.map((type) => {
    const heldIn = types.filter((t) => t !== type);
    const scores = byVariant.map((r) => mean(heldIn.flatMap((h) => (r.get(h) as AppResult[]).map((a) => a.model))));
    const chosen = Math.max(chooseVariant(scores), 0);
    const r = byVariant[chosen] as Map<string, AppResult[]>;
    const results = r.get(type) as AppResult[];
    return {
      type,
      variant: (VARIANTS[chosen] as { label: string }).label,
      results,
      scores,
      calibration: calibrate(
        results,
        heldIn.flatMap((h) => r.get(h) as AppResult[]),
      ),
    };
  });
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

const intervalText = (c: Calibration): string =>
  c.interval
    ? applyInterval(1, c.interval)
        .map((x) => `${x >= 1 ? '+' : ''}${(100 * (x - 1)).toFixed(1)}%`)
        .join(' .. ')
    : '-';

function printCalibration(
  label: string,
  types: readonly { type: string; calibration: Calibration }[],
  overallPct: number,
): void {
  console.log('');
  console.log(`Calibration (${label}): 80% interval of each type's rows from the errors on the other types only`);
  console.log('| type | interval of measured / predicted step time | rows inside |');
  console.log('| --- | --- | ---: |');
  for (const { type, calibration: c } of types)
    console.log(`| ${type} | ${intervalText(c)} | ${c.inside} / ${c.rows} (${pct(c.inside / Math.max(c.rows, 1))}) |`);
  console.log(`overall: ${overallPct.toFixed(1)}% of rows inside their 80% interval (target 70-90%)`);
}

function printLoto(
  loto: readonly LotoType[],
  overall: { median_abs_pct_error: number; worst_app_abs_pct_error: number; interval_coverage_pct: number },
): void {
  console.log('');
  console.log(
    'Leave one type out: the contention knobs chosen on the other types only (lowest mean application error there), scored on the type',
  );
  console.log(
    '| left-out type | knobs chosen on held-in types | median of applications | worst application | 80% interval (held-in types) | rows inside |',
  );
  console.log('| --- | --- | ---: | ---: | --- | ---: |');
  for (const t of loto) {
    const c = t.calibration;
    const errs = t.results.map((r) => r.model);
    console.log(
      `| ${t.type} | ${t.variant} | ${pct(median(errs))} | ${pct(Math.max(...errs))} | ${intervalText(c)} | ${c.inside} / ${c.rows} (${pct(c.inside / Math.max(c.rows, 1))}) |`,
    );
  }
  console.log('');
  console.log(
    `held-in score of each variant (mean of the applications' median errors on the other types): ${VARIANTS.map((v) => v.label).join(' | ')}`,
  );
  for (const t of loto) console.log(`  without ${t.type}: ${t.scores.map((x) => pct(x)).join(' | ')}`);
  console.log(
    `leave one type out overall: median ${overall.median_abs_pct_error.toFixed(1)}%, worst application ${overall.worst_app_abs_pct_error.toFixed(1)}% (target <= 12% and <= 25%); ${overall.interval_coverage_pct.toFixed(1)}% of rows inside their 80% interval (target 70-90%)`,
  );
}

const pct1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : '-');

try {
  main();
} catch (error) {
  if (!(error instanceof GoodputError)) throw error;
  console.error(`error: ${error.message}`);
  process.exit(error.exitCode);
}
