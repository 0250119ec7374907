/**
 * `npm run bench:policy-compare`: the acceptance table of the goodput policy (docs/policy.md).
 * Runs `goodput` and `pollux` on workloads 1-4 at loads 0.5/1.0/1.5/2.0 in the simulator and
 * prints, per (load, workload): goodput's average JCT and its ratio to Pollux's published average
 * (issue #18: mean over the pairs <= 0.80, no pair above 0.90), p99 JCT (<= 1.10 x), makespan and
 * GPU-hours of goodput beside our pollux run, and the worst finish-time-fairness ratio (no worse)
 * and share of jobs with a ratio above 1 for both; then the mean ratio and the GPU-hours summed
 * over the pairs against pollux's (<= 1.00).
 *
 * Pollux is slow (about a minute per workload at load 1.0, more at 2.0, per seed), so its figures
 * can be saved once and reused:
 *   npm run bench:policy-compare -- --save-pollux bench-pollux.json      # runs both, saves pollux
 *   npm run bench:policy-compare -- --pollux-json bench-pollux.json      # runs goodput only
 *   npm run bench:policy-compare -- --no-pollux --loads 1.0              # goodput only, no p99 check
 * Same for goodput: --save-goodput FILE / --goodput-json FILE (e.g. to run loads in batches).
 * Other flags: --workloads 1,2,3,4  --pollux-seeds 1  --concurrency 2
 *   --goodput-param NAME=VALUE (repeatable): a variant of goodput's knobs, e.g. rank_exponent=3
 */
import { writeFileSync } from 'node:fs';
import { percentile } from '../src/sim/metrics.js';
import type { SimTask } from '../src/sim/parallel.js';
import type { WorkloadReport } from '../src/sim/run-workload.js';
import { loadWorkload } from '../src/sim/workload.js';
import {
  meanRow,
  pairKey as key,
  readSavedRows,
  runWithProgress,
  type ComparisonRow as Row,
} from './comparison-rows.js';
import { publishedResults, workloadFile } from './pollux-data.js';
import { benchArgs, goodputParamsOrExit } from './bench-args.js';

/** Acceptance of issue #18: mean over the pairs of avg JCT / published Pollux avg ... */
const TARGET_MEAN_RATIO = 0.8;
/** ... no pair above this ratio ... */
const MAX_PAIR_RATIO = 0.9;
/** ... and p99 JCT at most this multiple of our pollux run's on every pair. */
const P99_FACTOR = 1.1;

const USAGE = `
usage: npm run bench:policy-compare -- [--loads 0.5,1.0,1.5,2.0] [--workloads 1,2,3,4]
         [--pollux-seeds 1] [--pollux-json FILE | --save-pollux FILE | --no-pollux]
         [--goodput-json FILE | --save-goodput FILE] [--goodput-param K=V ...] [--concurrency 2]
goodput against pollux on workloads 1-4 at each load: average JCT / Pollux's published one,
p99, makespan, GPU-hours and finish-time fairness (docs/policy.md).
`;
const values = benchArgs(USAGE, {
  loads: { type: 'string', default: '0.5,1.0,1.5,2.0' },
  workloads: { type: 'string', default: '1,2,3,4' },
  'pollux-seeds': { type: 'string', default: '1' },
  'pollux-json': { type: 'string' },
  'save-pollux': { type: 'string' },
  'goodput-json': { type: 'string' },
  'save-goodput': { type: 'string' },
  'no-pollux': { type: 'boolean', default: false },
  concurrency: { type: 'string', default: '2' },
  'goodput-param': { type: 'string', multiple: true },
});
const loads = values.loads.split(',');
const workloads = values.workloads.split(',').map(Number);
const polluxSeeds = Number(values['pollux-seeds']);
const published = publishedResults();

const goodputParams = goodputParamsOrExit(values['goodput-param'] ?? [], '--goodput-param');

// Read saved results before the (long) runs, so that a bad file fails at once.
const savedPollux = values['pollux-json'] === undefined ? [] : readSavedRows(values['pollux-json']);
const savedGoodput = values['goodput-json'] === undefined ? [] : readSavedRows(values['goodput-json']);

type Task = SimTask & { load: string; k: number; policy: string };
const tasks: Task[] = [];
const runPollux = !values['no-pollux'] && values['pollux-json'] === undefined;
for (const load of loads) {
  for (const k of workloads) {
    if (values['goodput-json'] === undefined)
      tasks.push({
        file: workloadFile(load, k),
        settings: { policy: 'goodput', seed: 1, policy_params: goodputParams },
        load,
        k,
        policy: 'goodput',
      });
    if (runPollux) {
      for (let seed = 1; seed <= polluxSeeds; seed++)
        tasks.push({ file: workloadFile(load, k), settings: { policy: 'pollux', seed }, load, k, policy: 'pollux' });
    }
  }
}

const started = performance.now();
const reports = await runWithProgress(tasks, Number(values.concurrency));

/** Mean over seeds of the figures of one policy on one (load, workload). */
function rowOf(policy: string, load: string, k: number): Row | undefined {
  const runs: WorkloadReport[] = reports.filter(
    (_, i) => tasks[i]!.policy === policy && tasks[i]!.load === load && tasks[i]!.k === k,
  );
  return runs.length === 0 ? undefined : meanRow(load, k, runs);
}

/** Saved rows of `policy`, overridden by this run's; written to `saveFile` when given. */
function rowsFor(policy: string, saved: readonly Row[], saveFile: string | undefined): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const row of saved) rows.set(key(row.load, row.k), row);
  for (const load of loads)
    for (const k of workloads) {
      const row = rowOf(policy, load, k);
      if (row) rows.set(key(load, k), row);
    }
  if (saveFile !== undefined) writeFileSync(saveFile, `${JSON.stringify([...rows.values()], null, 1)}\n`);
  return rows;
}

const pollux = rowsFor('pollux', savedPollux, values['save-pollux']);
const goodput = rowsFor('goodput', savedGoodput, values['save-goodput']);

const f0 = (x: number | undefined): string => (x === undefined ? 'n/a' : x.toFixed(0));
const f2 = (x: number | undefined): string => (x === undefined ? 'n/a' : x.toFixed(2));
const variant = Object.keys(goodputParams).length > 0 ? `, goodput params ${JSON.stringify(goodputParams)}` : '';
console.log(
  `goodput vs pollux (pollux: ${runPollux ? `${polluxSeeds} seed(s) run now` : (values['pollux-json'] ?? 'not run')}${variant}), ${((performance.now() - started) / 1000).toFixed(0)} s wall`,
);
console.log(
  `load w  goodput avg  published pollux  ratio(<=${MAX_PAIR_RATIO})  p99 goodput/pollux (<=${P99_FACTOR}x)  makespan goodput/pollux  FTF worst g/p  FTF>1 share g/p  restarts g/p  GPU-h g/p`,
);
let met = 0;
let checked = 0;
const ratios: number[] = [];
let gpuHours = 0;
let polluxGpuHours = 0;
for (const load of loads) {
  for (const k of workloads) {
    const g = goodput.get(key(load, k));
    if (!g) continue;
    const p = pollux.get(key(load, k));
    const pub = published[`pollux-${load}`]?.avg_jct_s[`workload-${k}`];
    const ratio = pub !== undefined ? g.avg_jct_s / pub : NaN;
    const p99Ok = !p || g.p99_jct_s <= P99_FACTOR * p.p99_jct_s;
    const ok = ratio <= MAX_PAIR_RATIO && p99Ok && (!p || g.ftf_worst <= p.ftf_worst);
    checked++;
    if (ok) met++;
    ratios.push(ratio);
    if (p) {
      gpuHours += g.gpu_hours;
      polluxGpuHours += p.gpu_hours;
    }
    console.log(
      [
        load.padEnd(4),
        String(k).padEnd(2),
        f0(g.avg_jct_s).padStart(11),
        f0(pub).padStart(17),
        `${f2(ratio)}${ratio <= MAX_PAIR_RATIO ? ' ok' : ' NO'}`.padStart(14),
        `${f0(g.p99_jct_s)}/${f0(p?.p99_jct_s)}${p99Ok ? '' : ' NO'}`.padStart(27),
        `${f0(g.makespan_s)}/${f0(p?.makespan_s)}`.padStart(24),
        `${f2(g.ftf_worst)}/${f2(p?.ftf_worst)}`.padStart(14),
        `${f2(g.ftf_unfair_share)}/${f2(p?.ftf_unfair_share)}`.padStart(16),
        `${f0(g.restarts)}/${f0(p?.restarts)}`.padStart(13),
        `${f0(g.gpu_hours)}/${f0(p?.gpu_hours)}`.padStart(10),
      ].join(' '),
    );
  }
}
const meanRatio = ratios.reduce((s, x) => s + x, 0) / ratios.length;
console.log(
  `mean ratio to published Pollux ${meanRatio.toFixed(3)} (target <= ${TARGET_MEAN_RATIO})${polluxGpuHours > 0 ? `, GPU-hours ${(gpuHours / polluxGpuHours).toFixed(3)} x our pollux (target <= 1.00)` : ''}`,
);
console.log(
  `${met}/${checked} (load, workload) pairs meet ratio <= ${MAX_PAIR_RATIO}${pollux.size > 0 ? `, p99 <= ${P99_FACTOR} x and worst FTF <= our pollux` : ''}`,
);

// The p99 and makespan targets compare with our pollux port; check that port against the published
// run, whose p99 and makespan follow from its per-job JCTs and the workload's submission times.
if (pollux.size > 0) {
  console.log('\nour pollux vs the published Pollux run (p99 and makespan from its per-job JCTs):');
  console.log('load w  p99 ours/published  makespan ours/published');
  for (const load of loads) {
    for (const k of workloads) {
      const p = pollux.get(key(load, k));
      const jobs = published[`pollux-${load}`]?.job_jct_s[`workload-${k}`];
      if (!p || !jobs) continue;
      const submitted = new Map(loadWorkload(workloadFile(load, k)).jobs.map((j) => [j.name, j.submit_s]));
      const makespan = Math.max(...Object.entries(jobs).map(([name, jct]) => (submitted.get(name) ?? NaN) + jct));
      const p99 = percentile(Object.values(jobs), 99);
      console.log(
        `${load.padEnd(4)} ${String(k).padEnd(2)} ${`${f0(p.p99_jct_s)}/${f0(p99)} (${f2(p.p99_jct_s / p99)})`.padStart(25)} ${`${f0(p.makespan_s)}/${f0(makespan)} (${f2(p.makespan_s / makespan)})`.padStart(28)}`,
      );
    }
  }
}
