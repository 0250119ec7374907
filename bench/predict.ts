/**
 * How well multi-node throughput is predicted for a job measured on at most one node (issue #18).
 * Run: npm run bench:predict [-- --json] [-- --partial] [-- --sparse].
 *
 * For each application of the Pollux traces, the job's profile is its measurements on one node
 * (1-4 GPUs at every per-GPU batch of its grid, as sim-job.ts observe() would record them;
 * `--sparse`: only 1 and 4 GPUs at every third batch of the grid, closer to a job that went
 * 1 -> 4 GPUs with a few batch sizes). `--partial` also evaluates every measured replica count
 * below 4 per node.
 * - baseline: today's fit of those points (fitPerfParams), which extrapolates the intra-node
 *   parameters to the network;
 * - network model: the same fit with the inter-node terms of the cluster network model
 *   (src/goodput/network-model.ts), fitted leave-one-application-out on what the OTHER
 *   applications reported: their one-node points and their points on whole nodes at the
 *   reported node counts. Default 4 and 16 nodes: the sizes the goodput policy explores
 *   (explore_factor 4 from 1 GPU: 4, 16, 64 GPUs), so what the cluster's other jobs have
 *   reported once they have grown. Other report sets and proxies, and the parameter map with
 *   each job's own intra-node sync (fourteenth round, not the default), are printed as
 *   sensitivity, with two diagnostics (a perfect proxy; each job's own multi-node fit).
 * Both predict throughput (r b / step time) on 2-16 whole nodes of 4 GPUs at every per-GPU batch
 * the trace measured there, compared with the trace's measured step time (placements.csv for 2-4
 * nodes, scalability.csv for 6-16; never the interpolated table). Deterministic.
 */
import { fitPerfParams } from '../src/goodput/fit.js';
import {
  fitNetworkModel,
  INTRA_SYNC_WEIGHT,
  predictPerfParams,
  type NetworkParams,
  type SizeProxy,
} from '../src/goodput/network-model.js';
import { stepTime_s } from '../src/goodput/throughput.js';
import { fitSyncPhysics, type SyncGrowth } from '../src/goodput/sync-physics.js';
import type { PerfParams, ProfilePoint } from '../src/goodput/types.js';
import { applicationNames, getApplication, type TraceApplication } from '../src/sim/application.js';
import { defaultTracesDir } from '../src/sim/workload.js';
import { localBatchGrid, multiNodeMeasurements, oneNodeMeasurements, toPoint, type Measured } from './predict-data.js';
import { benchArgs } from './bench-args.js';

const TARGET = 0.15;
const EVAL_NODES = [2, 3, 4, 6, 8, 12, 16];
/**
 * One way of fitting the network model: the node counts reported by the other jobs, whether jobs
 * report their parameter count, the proxy, the mapping, the growth (undefined: the model's
 * default, proportional with parameter counts, latency without), the weight of each job's own
 * intra-node sync in the parameter map (NetworkModelOptions.intra_sync_weight).
 */
interface Variant {
  reported: readonly number[];
  parameters: boolean;
  proxy: SizeProxy;
  mapping: 'ratio' | 'power';
  growth: SyncGrowth | undefined;
  intra_sync_weight: number | 'fitted';
}
const DEFAULT: Variant = {
  reported: [4, 16],
  parameters: true,
  proxy: 'fixed_compute',
  mapping: 'ratio',
  growth: undefined,
  intra_sync_weight: INTRA_SYNC_WEIGHT,
};
/** The parameter map with each job's whole intra-node sync added (2026-11-26; not the default, docs/policy.md). */
const INTRA: Variant = { ...DEFAULT, intra_sync_weight: 1 };
/** The default before jobs reported their parameter count (2026-11-24). */
const NO_PARAMETERS: Variant = { ...DEFAULT, parameters: false };
const VARIANTS: readonly Variant[] = [
  { ...DEFAULT, reported: [2] },
  { ...DEFAULT, reported: [2, 4] },
  { ...DEFAULT, reported: [4, 8, 16] },
  { ...DEFAULT, reported: [2, 4, 8, 16] },
  { ...DEFAULT, growth: 'latency' },
  INTRA,
  { ...INTRA, reported: [2] },
  { ...INTRA, reported: [2, 4] },
  { ...INTRA, reported: [4, 8, 16] },
  { ...INTRA, reported: [2, 4, 8, 16] },
  { ...INTRA, growth: 'latency' },
  { ...DEFAULT, intra_sync_weight: 0.5 },
  { ...DEFAULT, intra_sync_weight: 2 },
  { ...DEFAULT, intra_sync_weight: 'fitted' },
  NO_PARAMETERS,
  { ...NO_PARAMETERS, reported: [2] },
  { ...NO_PARAMETERS, reported: [2, 4] },
  { ...NO_PARAMETERS, reported: [2, 4, 8, 16] },
  { ...NO_PARAMETERS, mapping: 'power' },
  { ...NO_PARAMETERS, proxy: 'intra_sync' },
  { ...NO_PARAMETERS, proxy: 'constant' },
  { ...NO_PARAMETERS, growth: 'proportional' },
];
/** The growth the network model fits for `v` (its default when unset: proportional with parameter counts). */
const growthOf = (v: Variant): SyncGrowth => v.growth ?? (v.parameters ? 'proportional' : 'latency');
/** The intra-node sync term of `v`'s label: none without a parameter count or at weight 0 (the default's label as before). */
function intraLabel(v: Variant): string {
  if (!v.parameters || v.intra_sync_weight === 0) return '';
  if (v.intra_sync_weight === 1) return 'intra-node sync + ';
  return v.intra_sync_weight === 'fitted'
    ? 'fitted weight x intra-node sync + '
    : `${v.intra_sync_weight} x intra-node sync + `;
}
const label = (v: Variant): string =>
  `${intraLabel(v)}${v.parameters ? 'parameter count + ' : ''}${v.proxy}, ${v.mapping}, ${growthOf(v)} growth, reports from ${v.reported.join(',')} nodes`;

/** The parameter count a job of `a` reports under `variant`. */
const reportedParameters = (a: AppData, variant: Variant): number | undefined =>
  variant.parameters ? a.app.model_parameters : undefined;

interface AppData {
  name: string;
  app: TraceApplication;
  /** The per-GPU batches measured on one GPU (localBatchGrid). */
  grid: number[];
  oneNode: Measured[];
  /** Whole-node (or, with --partial, all) multi-node measurements at every evaluated node count. */
  multi: Measured[];
  oneNodePerf: PerfParams;
}

interface Errors {
  median: number;
  max: number;
  count: number;
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function summarize(errors: readonly number[]): Errors {
  return { median: median(errors), max: errors.length ? Math.max(...errors) : NaN, count: errors.length };
}

/** |predicted / measured - 1| of throughput, i.e. measured step / predicted step - 1. */
function relativeErrors(perf: PerfParams, measured: readonly Measured[]): number[] {
  return measured.map((m) =>
    Math.abs(m.step_time_s / stepTime_s(perf, m.num_nodes, m.num_replicas, m.local_bsz, 0) - 1),
  );
}

function loadApps(partial: boolean, sparse: boolean): AppData[] {
  const dir = defaultTracesDir();
  return applicationNames.map((name) => {
    const app = getApplication(name, dir) as TraceApplication;
    const grid = localBatchGrid(app, dir);
    const oneNode = sparse ? oneNodeMeasurements(app, grid, [1, 4], 3) : oneNodeMeasurements(app, grid);
    const multi = multiNodeMeasurements(app, dir, grid, EVAL_NODES, partial);
    return { name, app, grid, oneNode, multi, oneNodePerf: fitPerfParams(oneNode.map(toPoint)) };
  });
}

/** What `a` reports once it has run on whole nodes at the node counts `nodes`, as profile points. */
function reportedPoints(a: AppData, nodes: readonly number[]): ProfilePoint[] {
  return multiNodeMeasurements(a.app, defaultTracesDir(), a.grid, nodes).map(toPoint);
}

/** The network model fitted on every application but `heldOut`, from the reported node counts. */
function leaveOneOut(apps: readonly AppData[], heldOut: string, variant: Variant): NetworkParams | undefined {
  const jobs = apps
    .filter((a) => a.name !== heldOut)
    .map((a) => ({
      points: [...a.oneNode.map(toPoint), ...reportedPoints(a, variant.reported)],
      model_parameters: reportedParameters(a, variant),
    }));
  return fitNetworkModel(jobs, {
    proxy: variant.proxy,
    mapping: variant.mapping,
    growth: growthOf(variant),
    intra_sync_weight: variant.intra_sync_weight,
  });
}

interface AppResult {
  application: string;
  points: number;
  baseline: Errors;
  network: Errors;
  by_nodes: { num_nodes: number; baseline: number; network: number }[];
  /** Median error on the job's own one-node points (the cluster gamma replaces the job's). */
  one_node: { baseline: number; network: number };
  model: NetworkParams | undefined;
}

/**
 * Diagnostic, not a predictor: the model's form with the held-out job's own bandwidth term
 * (fitted on its own multi-node points at the reported counts, with the others'): the error left
 * when the one-node proxy is perfect.
 */
function oracleErrors(apps: readonly AppData[], variant: Variant): number[] {
  return apps.map((a) => {
    const others = apps.filter((o) => o.name !== a.name).map((o) => reportedPoints(o, variant.reported));
    const physics = fitSyncPhysics([...others, reportedPoints(a, variant.reported)], growthOf(variant));
    const alpha_n = physics.bandwidth_s[others.length] as number;
    const beta_n = Math.max(physics.latency_per_replica_s + physics.growth_per_replica * alpha_n, 1e-8);
    const perf: PerfParams = { ...a.oneNodePerf, alpha_n, beta_n, gamma: physics.gamma };
    return median(relativeErrors(perf, a.multi));
  });
}

/**
 * Diagnostic, not a predictor: each job's own fit of the model's form (bandwidth term, growth and
 * gamma its own) on its points at the reported node counts, evaluated on all its multi-node
 * points: what the form leaves when the cluster is no help at all.
 */
function ownFitErrors(apps: readonly AppData[], variant: Variant): number[] {
  return apps.map((a) => {
    const physics = fitSyncPhysics([reportedPoints(a, variant.reported)], growthOf(variant));
    const alpha_n = physics.bandwidth_s[0] as number;
    const beta_n = Math.max(physics.latency_per_replica_s + physics.growth_per_replica * alpha_n, 1e-8);
    const perf: PerfParams = {
      ...fitPerfParams(a.oneNode.map(toPoint), { gamma: physics.gamma }),
      alpha_n,
      beta_n,
      gamma: physics.gamma,
    };
    return median(relativeErrors(perf, a.multi));
  });
}

function evaluate(apps: readonly AppData[], variant: Variant): AppResult[] {
  return apps.map((a) => {
    const model = leaveOneOut(apps, a.name, variant);
    const predicted = predictPerfParams(a.oneNode.map(toPoint), model, reportedParameters(a, variant));
    const base = relativeErrors(a.oneNodePerf, a.multi);
    const mine = relativeErrors(predicted, a.multi);
    const by_nodes = EVAL_NODES.flatMap((n) => {
      const idx = a.multi.flatMap((m, i) => (m.num_nodes === n ? [i] : []));
      if (idx.length === 0) return [];
      return [
        {
          num_nodes: n,
          baseline: median(idx.map((i) => base[i] as number)),
          network: median(idx.map((i) => mine[i] as number)),
        },
      ];
    });
    const one_node = {
      baseline: median(relativeErrors(a.oneNodePerf, a.oneNode)),
      network: median(relativeErrors(predicted, a.oneNode)),
    };
    return {
      application: a.name,
      points: a.multi.length,
      baseline: summarize(base),
      network: summarize(mine),
      by_nodes,
      one_node,
      model,
    };
  });
}

const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-');

function printMain(results: readonly AppResult[]): void {
  console.log(
    `Predicted multi-node throughput from one-node measurements (2-16 nodes x 4 GPUs), |predicted/measured - 1|`,
  );
  console.log(`network model: ${label(DEFAULT)}, fitted leave-one-application-out on the other applications`);
  console.log(
    `profile of each job: ${sparse ? '1 and 4 GPUs, every third per-GPU batch (--sparse)' : '1-4 GPUs on one node at every per-GPU batch'}; evaluated: ${partial ? 'every measured replica count (--partial)' : 'whole nodes'}`,
  );
  console.log('');
  console.log(
    '| application | points | baseline median | baseline max | network median | network max | < 15% | one node: baseline / network |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |');
  for (const r of results) {
    const oneNode = `${pct(r.one_node.baseline)} / ${pct(r.one_node.network)}`;
    console.log(
      `| ${r.application} | ${r.points} | ${pct(r.baseline.median)} | ${pct(r.baseline.max)} | ${pct(r.network.median)} | ${pct(r.network.max)} | ${r.network.median < TARGET ? 'yes' : 'NO'} | ${oneNode} |`,
    );
  }
  const all = (k: 'baseline' | 'network'): number => median(results.map((r) => r[k].median));
  console.log(`| median of the applications | | ${pct(all('baseline'))} | | ${pct(all('network'))} | | | |`);
  console.log('');
  console.log(`Median error per node count, baseline / network model:`);
  console.log(`| application | ${EVAL_NODES.map((n) => `${n} nodes`).join(' | ')} |`);
  console.log(`| --- | ${EVAL_NODES.map(() => '---:').join(' | ')} |`);
  for (const r of results) {
    const cells = EVAL_NODES.map((n) => {
      const c = r.by_nodes.find((b) => b.num_nodes === n);
      return c ? `${pct(c.baseline)} / ${pct(c.network)}` : '-';
    });
    console.log(`| ${r.application} | ${cells.join(' | ')} |`);
  }
  console.log('');
  console.log('Fitted cluster parameters (leave-one-out, per held-out application):');
  for (const r of results) {
    const m = r.model;
    if (!m) continue;
    const map = m.parameter_map;
    const byParameters = map
      ? `N = ${map.intra_sync_weight > 0 ? `${map.intra_sync_weight.toFixed(2)} x intra-node sync + ` : ''}${(1e9 * map.sync_per_parameter_s).toFixed(2)} ms per million parameters + ${map.sync_per_proxy_s.toFixed(3)} x alpha_c; `
      : '';
    console.log(
      `  without ${r.application}: ${byParameters}sync per proxy ${m.sync_per_proxy.toFixed(3)}, exponent ${m.proxy_exponent.toFixed(2)}, latency per replica ${(1000 * m.latency_per_replica_s).toFixed(2)} ms, growth per replica ${(100 * m.growth_per_replica).toFixed(2)}%, gamma ${m.gamma.toFixed(2)} (${m.num_jobs} jobs, ${m.num_points} points)`,
    );
  }
}

const USAGE = `
usage: npm run bench:predict -- [--json] [--partial] [--sparse]
Error of multi-node throughput predicted from one-node measurements, per application of the
Pollux traces: today's fit (baseline) beside the cluster network model (docs/policy.md).
`;
const values = benchArgs(USAGE, {
  json: { type: 'boolean', default: false },
  partial: { type: 'boolean', default: false },
  sparse: { type: 'boolean', default: false },
});
const { json, partial, sparse } = values;
const apps = loadApps(partial, sparse);
const main = evaluate(apps, DEFAULT);
const sensitivity = VARIANTS.map((v) => ({ ...v, results: evaluate(apps, v) }));
if (json) {
  console.log(
    JSON.stringify(
      { evaluated_nodes: EVAL_NODES, partial, sparse, default: DEFAULT, results: main, sensitivity },
      null,
      2,
    ),
  );
} else {
  printMain(main);
  console.log('');
  console.log('Sensitivity: median error per application, network model variants (the baseline does not change)');
  console.log(`| variant | ${main.map((r) => r.application).join(' | ')} | median |`);
  console.log(`| --- | ${main.map(() => '---:').join(' | ')} | ---: |`);
  const row = (name: string, rs: readonly AppResult[], k: 'baseline' | 'network'): void =>
    console.log(
      `| ${name} | ${rs.map((r) => pct(r[k].median)).join(' | ')} | ${pct(median(rs.map((r) => r[k].median)))} |`,
    );
  row('baseline (fitPerfParams)', main, 'baseline');
  row(`**default: ${label(DEFAULT)}**`, main, 'network');
  for (const v of sensitivity) row(label(v), v.results, 'network');
  const oracle = oracleErrors(apps, DEFAULT);
  console.log(
    `| diagnostic: the default's form with the held-out job's own bandwidth term (a perfect proxy) | ${oracle.map(pct).join(' | ')} | ${pct(median(oracle))} |`,
  );
  const own = ownFitErrors(apps, DEFAULT);
  console.log(
    `| diagnostic: each job's own fit of the form on its reported points (bandwidth, growth, gamma its own) | ${own.map(pct).join(' | ')} | ${pct(median(own))} |`,
  );
}
