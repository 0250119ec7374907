/**
 * `npm run bench:policy-frontier`: where variants of the goodput policy sit between the two
 * acceptance criteria that pull apart (docs/policy.md): average JCT <= 0.80 x Pollux's published
 * average, and makespan / p99 JCT no worse than our pollux run. Runs each variant on workloads 1-4
 * at loads 0.5/1.0/1.5/2.0 and prints, per variant: pairs meeting the average target, the mean and
 * worst ratio, GPU-hours against pollux's, the makespan ratio range, pairs with p99 and makespan
 * no worse, and pairs meeting all three. Then, for the first variant, makespan against GPU-hours per
 * pair: on a cluster busy until its last hours the makespan is the GPU-hours used divided by the
 * GPUs, so a policy that spends more GPU-hours than pollux ends later.
 *
 * Pollux's figures come from a file saved by bench:policy-compare (default: the committed
 * bench/results/pollux-seed1.json), so the run takes about 40 s per variant on 2 cores.
 * Flags: --variant 'NAME=VALUE,NAME=VALUE' (repeatable; replaces the built-in list; 'default' is
 * the unchanged policy), --pollux-json FILE, --loads 0.5,1.0,1.5,2.0, --workloads 1,2,3,4,
 * --concurrency 2, --jitter-seeds N (default 0): instead of the workloads as written, N copies of
 * each with every submission moved by up to +-jitter-s/2 seconds (--jitter-s, default 240), and
 * the figures averaged over the copies. The simulator is chaotic: one job finishing a round
 * earlier moves a pair's ratio by a few hundredths, so a difference between variants counts only
 * if it holds over such copies (they are still compared with pollux's runs as written).
 */
import { parseArgs } from 'node:util';
import { goodputPolicy } from '../src/policy/goodput/index.js';
import type { PolicyParamValue } from '../src/policy/policy.js';
import { parsePolicyParams } from '../src/policy/policy-params.js';
import type { SimTask } from '../src/sim/parallel.js';
import { packagePath } from '../src/util/package-root.js';
import { meanRow, pairKey, readSavedRows, runWithProgress, type ComparisonRow } from './comparison-rows.js';
import { publishedResults, workloadFile } from './pollux-data.js';

const TARGET_RATIO = 0.8;
/** GPUs of the simulator's default cluster (16 nodes x 4 GPUs), which every run here uses. */
const CLUSTER_GPUS = 64;
/** A cluster busy at least this share of its makespan ends about when its GPU-hours are spent. */
const BUSY = 0.9;

/** Built-in variants: the default and the knobs that move it along the trade-off (docs/policy.md). */
const BUILT_IN_VARIANTS = [
  'default',
  'unmeasured_gain_share=1',
  'rank_exponent=3',
  'rank_exponent=2',
  'rank_exponent=1',
  'rank_exponent=1,utility_power=2',
  'min_marginal_speedup=0.15',
  'min_marginal_speedup=0.3',
  'min_weight_share=0.2',
];

const { values } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true },
    'pollux-json': { type: 'string', default: packagePath('bench', 'results', 'pollux-seed1.json') },
    loads: { type: 'string', default: '0.5,1.0,1.5,2.0' },
    workloads: { type: 'string', default: '1,2,3,4' },
    concurrency: { type: 'string', default: '2' },
    'jitter-seeds': { type: 'string', default: '0' },
    'jitter-s': { type: 'string', default: '240' },
  },
});
const jitterSeeds = Number(values['jitter-seeds']);
const jitter_s = Number(values['jitter-s']);
if (!Number.isInteger(jitterSeeds) || jitterSeeds < 0) fail(`--jitter-seeds must be a whole number >= 0, got '${values['jitter-seeds']}'.`);
if (!(jitter_s > 0)) fail(`--jitter-s must be a number of seconds > 0, got '${values['jitter-s']}'.`);
const seeds = jitterSeeds > 0 ? Array.from({ length: jitterSeeds }, (_, i) => i + 1) : [1];
const loads = values.loads.split(',');
const workloads = values.workloads.split(',').map(Number);
const variants = (values.variant ?? BUILT_IN_VARIANTS).map((spec) => ({ spec, params: parseVariant(spec) }));
const pollux = new Map(readSavedRows(values['pollux-json']).map((row) => [pairKey(row.load, row.k), row]));
const published = publishedResults();
const pairs = loads.flatMap((load) => workloads.map((k) => ({ load, k })));
for (const { load, k } of pairs) {
  if (!pollux.has(pairKey(load, k))) fail(`${values['pollux-json']} has no pollux row for load ${load}, workload ${k}; save one with bench:policy-compare --save-pollux.`);
  if (published[`pollux-${load}`]?.avg_jct_s[`workload-${k}`] === undefined) fail(`no published Pollux result for load ${load}, workload ${k}.`);
}

type Task = SimTask & { variant: number; load: string; k: number };
const tasks: Task[] = variants.flatMap((v, variant) => pairs.flatMap(({ load, k }) => seeds.map((seed) => ({
  file: workloadFile(load, k),
  settings: { policy: 'goodput', seed, policy_params: v.params, fairness: false, submit_jitter_s: jitterSeeds > 0 ? jitter_s : 0 },
  variant, load, k,
}))));
const started = performance.now();
const reports = await runWithProgress(tasks, Number(values.concurrency));

/** One row per pair for `variant`, averaged over the jittered copies when there are any. */
const rowsOf = (variant: number): ComparisonRow[] => pairs.map(({ load, k }) =>
  meanRow(load, k, reports.filter((_, i) => tasks[i]!.variant === variant && tasks[i]!.load === load && tasks[i]!.k === k)));
const polluxOf = (row: ComparisonRow): ComparisonRow => pollux.get(pairKey(row.load, row.k))!;
const publishedAvg = (row: ComparisonRow): number => published[`pollux-${row.load}`]!.avg_jct_s[`workload-${row.k}`]!;
const sum = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);

const copies = jitterSeeds > 0 ? `, each the mean of ${jitterSeeds} copies with submissions moved by up to +-${jitter_s / 2} s` : '';
console.log(`goodput variants vs pollux (${values['pollux-json']}), ${pairs.length} (load, workload) pairs${copies}, ${((performance.now() - started) / 1000).toFixed(0)} s wall`);
console.log(`${'variant'.padEnd(34)} avg<=${TARGET_RATIO}  mean  worst  GPU-h/pollux  makespan/pollux (pairs <=1)  p99<=pollux  all three`);
variants.forEach((v, variant) => {
  const rows = rowsOf(variant);
  const ratios = rows.map((r) => r.avg_jct_s / publishedAvg(r));
  const makespans = rows.map((r) => r.makespan_s / polluxOf(r).makespan_s);
  const p99Ok = rows.map((r) => r.p99_jct_s <= polluxOf(r).p99_jct_s);
  const all = rows.filter((_, i) => ratios[i]! <= TARGET_RATIO && makespans[i]! <= 1 && p99Ok[i]).length;
  const gpuHours = sum(rows.map((r) => r.gpu_hours)) / sum(rows.map((r) => polluxOf(r).gpu_hours));
  console.log([
    v.spec.padEnd(34), `${ratios.filter((x) => x <= TARGET_RATIO).length}/${rows.length}`.padStart(8),
    (sum(ratios) / rows.length).toFixed(3).padStart(6), Math.max(...ratios).toFixed(3).padStart(6), gpuHours.toFixed(3).padStart(13),
    `${Math.min(...makespans).toFixed(2)}-${Math.max(...makespans).toFixed(2)} (${makespans.filter((x) => x <= 1).length})`.padStart(28),
    `${p99Ok.filter(Boolean).length}/${rows.length}`.padStart(12), `${all}/${rows.length}`.padStart(10),
  ].join(' '));
});

console.log(`\nmakespan against GPU-hours, variant ${variants[0]!.spec} (ratios to pollux; busy = GPU-hours / (makespan x GPUs)):`);
console.log('load w  GPU-h ratio  makespan ratio  busy goodput/pollux');
const busy = (row: ComparisonRow): number => row.gpu_hours / ((row.makespan_s / 3600) * CLUSTER_GPUS);
const gaps: number[] = [];
for (const r of rowsOf(0)) {
  const p = polluxOf(r);
  const gpuRatio = r.gpu_hours / p.gpu_hours;
  const makespanRatio = r.makespan_s / p.makespan_s;
  if (Math.min(busy(r), busy(p)) >= BUSY) gaps.push(Math.abs(makespanRatio - gpuRatio));
  console.log(`${r.load.padEnd(4)} ${String(r.k).padEnd(2)} ${gpuRatio.toFixed(3).padStart(11)} ${makespanRatio.toFixed(3).padStart(15)} ${`${busy(r).toFixed(2)}/${busy(p).toFixed(2)}`.padStart(20)}`);
}
if (gaps.length > 0) console.log(`on the ${gaps.length} pairs where both policies kept the cluster busy >= ${BUSY * 100}% of their makespan, the makespan ratio equals the GPU-hour ratio within ${Math.max(...gaps).toFixed(3)}`);

/** `NAME=VALUE,NAME=VALUE` (or `default`) as validated goodput knobs; exits 2 on a bad one. */
function parseVariant(spec: string): Record<string, PolicyParamValue> {
  if (spec === 'default') return {};
  try {
    return parsePolicyParams(goodputPolicy, spec.split(','), '--variant');
  } catch (error) {
    fail((error as Error).message);
  }
}

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}
