/**
 * `npm run bench:policy-frontier`: where variants of the goodput policy sit against the acceptance
 * of issue #18 (docs/policy.md): mean over the pairs of average JCT / Pollux's published average
 * <= 0.80 with no pair above 0.90, GPU-hours summed over the pairs <= our pollux run's, p99 JCT
 * <= 1.10 x and worst finish-time fairness no worse than our pollux run's on every pair. Runs each
 * variant on workloads 1-4 at loads 0.5/1.0/1.5/2.0 and prints, per variant: the mean and worst
 * ratio, pairs above 0.90, GPU-hours and restarts against pollux's, pairs meeting the p99 and the
 * fairness criteria; then the per-pair figures of the first variant.
 *
 * Pollux's figures come from a file saved by bench:policy-compare (default: the committed
 * bench/results/pollux-seed1.json), so the run takes about 35 s per variant on 2 cores (about
 * 100 s with --jitter-seeds 3).
 * Flags: --variant 'NAME=VALUE,NAME=VALUE' (repeatable; replaces the built-in list; 'default' is
 * the unchanged policy), --pollux-json FILE, --loads 0.5,1.0,1.5,2.0, --workloads 1,2,3,4,
 * --concurrency 2, --jitter-seeds N (default 0): instead of the workloads as written, N copies of
 * each with every submission moved by up to +-jitter-s/2 seconds (--jitter-s, default 240), and
 * the figures averaged over the copies. The simulator is chaotic: one job finishing a round
 * earlier moves a pair's ratio by a few hundredths, so a difference between variants counts only
 * if it holds over such copies (they are still compared with pollux's runs as written).
 */
import type { PolicyParamValue } from '../src/policy/policy.js';
import type { SimTask } from '../src/sim/parallel.js';
import { packagePath } from '../src/util/package-root.js';
import { meanRow, pairKey, readSavedRows, runWithProgress, type ComparisonRow } from './comparison-rows.js';
import { publishedResults, workloadFile } from './pollux-data.js';
import { benchArgs, goodputParamsOrExit } from './bench-args.js';

/** Acceptance of issue #18: mean over the pairs of avg JCT / published Pollux avg. */
const TARGET_MEAN_RATIO = 0.8;
/** ... and no pair above this ratio. */
const MAX_PAIR_RATIO = 0.9;
/** p99 JCT at most this multiple of our pollux run's, on every pair. */
const P99_FACTOR = 1.1;

/** Built-in variants: the default and the knobs that move it along the trade-off (docs/policy.md). */
const BUILT_IN_VARIANTS = [
  'default',
  'profiles=false',
  'gpu_price=0',
  'gpu_price=0.01',
  'own_costates=true',
  'rank_exponent=2',
  'min_marginal_speedup=0.15',
  'min_marginal_speedup=0.3',
];

const USAGE = `
usage: npm run bench:policy-frontier -- [--variant 'K=V,K=V' ...] [--pollux-json FILE]
         [--loads 0.5,1.0,1.5,2.0] [--workloads 1,2,3,4] [--concurrency 2]
         [--jitter-seeds N] [--jitter-s 240]
Where variants of the goodput policy sit against issue #18's acceptance ('default' is the
unchanged policy); per-pair figures of the first variant (docs/policy.md).
`;
const values = benchArgs(USAGE, {
  variant: { type: 'string', multiple: true },
  'pollux-json': { type: 'string', default: packagePath('bench', 'results', 'pollux-seed1.json') },
  loads: { type: 'string', default: '0.5,1.0,1.5,2.0' },
  workloads: { type: 'string', default: '1,2,3,4' },
  concurrency: { type: 'string', default: '2' },
  'jitter-seeds': { type: 'string', default: '0' },
  'jitter-s': { type: 'string', default: '240' },
});
const jitterSeeds = Number(values['jitter-seeds']);
const jitter_s = Number(values['jitter-s']);
if (!Number.isInteger(jitterSeeds) || jitterSeeds < 0)
  fail(`--jitter-seeds must be a whole number >= 0, got '${values['jitter-seeds']}'.`);
if (!(jitter_s > 0)) fail(`--jitter-s must be a number of seconds > 0, got '${values['jitter-s']}'.`);
const seeds = jitterSeeds > 0 ? Array.from({ length: jitterSeeds }, (_, i) => i + 1) : [1];
const loads = values.loads.split(',');
const workloads = values.workloads.split(',').map(Number);
const variants = (values.variant ?? BUILT_IN_VARIANTS).map((spec) => ({ spec, params: parseVariant(spec) }));
const pollux = new Map(readSavedRows(values['pollux-json']).map((row) => [pairKey(row.load, row.k), row]));
const published = publishedResults();
const pairs = loads.flatMap((load) => workloads.map((k) => ({ load, k })));
for (const { load, k } of pairs) {
  if (!pollux.has(pairKey(load, k)))
    fail(
      `${values['pollux-json']} has no pollux row for load ${load}, workload ${k}; save one with bench:policy-compare --save-pollux.`,
    );
  if (published[`pollux-${load}`]?.avg_jct_s[`workload-${k}`] === undefined)
    fail(`no published Pollux result for load ${load}, workload ${k}.`);
}

type Task = SimTask & { variant: number; load: string; k: number };
const tasks: Task[] = variants.flatMap((v, variant) =>
  pairs.flatMap(({ load, k }) =>
    seeds.map((seed) => ({
      file: workloadFile(load, k),
      settings: {
        policy: 'goodput',
        seed,
        policy_params: v.params,
        fairness: true,
        submit_jitter_s: jitterSeeds > 0 ? jitter_s : 0,
      },
      variant,
      load,
      k,
    })),
  ),
);
const started = performance.now();
const reports = await runWithProgress(tasks, Number(values.concurrency));

/** One row per pair for `variant`, averaged over the jittered copies when there are any. */
const rowsOf = (variant: number): ComparisonRow[] =>
  pairs.map(({ load, k }) =>
    meanRow(
      load,
      k,
      reports.filter((_, i) => tasks[i]!.variant === variant && tasks[i]!.load === load && tasks[i]!.k === k),
    ),
  );
const polluxOf = (row: ComparisonRow): ComparisonRow => pollux.get(pairKey(row.load, row.k))!;
const publishedAvg = (row: ComparisonRow): number => published[`pollux-${row.load}`]!.avg_jct_s[`workload-${row.k}`]!;
const sum = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);

const copies =
  jitterSeeds > 0 ? `, each the mean of ${jitterSeeds} copies with submissions moved by up to +-${jitter_s / 2} s` : '';
console.log(
  `goodput variants vs pollux (${values['pollux-json']}), ${pairs.length} (load, workload) pairs${copies}, ${((performance.now() - started) / 1000).toFixed(0)} s wall`,
);
console.log(
  `acceptance (issue #18): mean ratio <= ${TARGET_MEAN_RATIO}, no pair above ${MAX_PAIR_RATIO}, GPU-h/pollux <= 1.00, p99 <= ${P99_FACTOR} x pollux and worst FTF <= pollux's on every pair`,
);
console.log(
  `${'variant'.padEnd(34)}   mean  worst  >${MAX_PAIR_RATIO}  GPU-h/pollux  p99<=${P99_FACTOR}x  FTF<=pollux  restarts/pollux`,
);
variants.forEach((v, variant) => {
  const rows = rowsOf(variant);
  const ratios = rows.map((r) => r.avg_jct_s / publishedAvg(r));
  const p99Ok = rows.filter((r) => r.p99_jct_s <= P99_FACTOR * polluxOf(r).p99_jct_s).length;
  const ftfOk = rows.filter((r) => r.ftf_worst <= polluxOf(r).ftf_worst).length;
  const gpuHours = sum(rows.map((r) => r.gpu_hours)) / sum(rows.map((r) => polluxOf(r).gpu_hours));
  const restarts = sum(rows.map((r) => r.restarts)) / sum(rows.map((r) => polluxOf(r).restarts));
  console.log(
    [
      v.spec.padEnd(34),
      (sum(ratios) / rows.length).toFixed(3).padStart(6),
      Math.max(...ratios)
        .toFixed(3)
        .padStart(6),
      `${ratios.filter((x) => x > MAX_PAIR_RATIO).length}`.padStart(5),
      gpuHours.toFixed(3).padStart(13),
      `${p99Ok}/${rows.length}`.padStart(11),
      `${ftfOk}/${rows.length}`.padStart(12),
      restarts.toFixed(3).padStart(16),
    ].join(' '),
  );
});

console.log(
  `\nper pair, variant ${variants[0]!.spec} (ratios: avg JCT to published Pollux; p99, worst FTF and GPU-hours to our pollux):`,
);
console.log('load w  avg ratio  p99 ratio  FTF goodput/pollux  GPU-h ratio');
for (const r of rowsOf(0)) {
  const p = polluxOf(r);
  console.log(
    `${r.load.padEnd(4)} ${String(r.k).padEnd(2)} ${(r.avg_jct_s / publishedAvg(r)).toFixed(3).padStart(9)} ${(r.p99_jct_s / p.p99_jct_s).toFixed(3).padStart(10)} ${`${r.ftf_worst.toFixed(2)}/${p.ftf_worst.toFixed(2)}`.padStart(18)} ${(r.gpu_hours / p.gpu_hours).toFixed(3).padStart(12)}`,
  );
}

/** `NAME=VALUE,NAME=VALUE` (or `default`) as validated goodput knobs; exits 2 on a bad one. */
function parseVariant(spec: string): Record<string, PolicyParamValue> {
  return spec === 'default' ? {} : goodputParamsOrExit(spec.split(','), '--variant');
}

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}
