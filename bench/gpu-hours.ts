/**
 * `npm run bench:gpu-hours`: where goodput spends more GPU-hours than pollux on one (load,
 * workload) pair (issue #18's cost criterion), so that a policy change can aim at it. Runs both
 * in the simulator and prints GPU-hours (GPU time held, restart delays included) three ways:
 * per application (exact, from each job's attained GPU time, with mean JCT beside it); per
 * number of active jobs in the round (from the interval log: the round's allocation held for the
 * round); and the jobs with the largest excess, with their JCT and restarts under each policy.
 * Deterministic for a pollux seed.
 */
import { findPolicy } from '../src/policy/registry.js';
import type { PolicyParamValue } from '../src/policy/policy.js';
import { simulate, type IntervalRecord, type SimResult } from '../src/sim/simulator.js';
import { loadWorkload } from '../src/sim/workload.js';
import { workloadFile } from './pollux-data.js';
import { benchArgs, goodputParamsOrExit } from './bench-args.js';

const USAGE = `
usage: npm run bench:gpu-hours -- [--load 1.0] [--workload 2] [--pollux-seed 1]
         [--goodput-param K=V ...] [--top 10]
Where goodput's GPU-hours go against pollux's on one pair: per application, per number of
active jobs, and the jobs with the largest excess (docs/policy.md).
`;
const values = benchArgs(USAGE, {
  load: { type: 'string', default: '1.0' },
  workload: { type: 'string', default: '2' },
  'pollux-seed': { type: 'string', default: '1' },
  'goodput-param': { type: 'string', multiple: true },
  top: { type: 'string', default: '10' },
});

interface Run {
  result: SimResult;
  /** GPU-hours by number of active jobs in the round. */
  byActive: Map<string, number>;
}

const ACTIVE_BANDS: readonly [number, string][] = [
  [1, '1'],
  [3, '2-3'],
  [8, '4-8'],
  [Infinity, '9+'],
];
const band = (n: number): string => ACTIVE_BANDS.find(([max]) => n <= max)![1];

function run(policyName: string, seed: number, params: Record<string, PolicyParamValue>): Run {
  const factory = findPolicy(policyName)!;
  const byActive = new Map<string, number>();
  let last_s = 0;
  const onInterval = (r: IntervalRecord): void => {
    const active = r.jobs.filter((j) => j.completion_time === null);
    const held = active.reduce((n, j) => n + j.allocation.length, 0);
    byActive.set(
      band(active.length),
      (byActive.get(band(active.length)) ?? 0) + (held * (r.timestamp - last_s)) / 3600,
    );
    last_s = r.timestamp;
  };
  const workload = loadWorkload(workloadFile(values.load, Number(values.workload)));
  const result = simulate(workload, policyName, factory.create({ seed, params }), { onInterval });
  return { result, byActive };
}

const goodputParams = goodputParamsOrExit(values['goodput-param'] ?? [], '--goodput-param');
console.error(
  `simulating workload-${values.workload} at load ${values.load} under goodput and pollux (about a minute) ...`,
);
const g = run('goodput', 1, goodputParams);
const p = run('pollux', Number(values['pollux-seed']), {});

const gpuH = (jobs: SimResult['jobs']) => jobs.reduce((s, j) => s + j.attained_gpu_s, 0) / 3600;
const meanJct = (jobs: SimResult['jobs']) => jobs.reduce((s, j) => s + j.jct_s, 0) / Math.max(jobs.length, 1);
const f1 = (x: number) => x.toFixed(1);
const total = { g: gpuH(g.result.jobs), p: gpuH(p.result.jobs) };
console.log(
  `workload-${values.workload} at load ${values.load}: GPU-hours goodput ${f1(total.g)}, pollux ${f1(total.p)} (x${(total.g / total.p).toFixed(3)}); mean JCT ${meanJct(g.result.jobs).toFixed(0)} s vs ${meanJct(p.result.jobs).toFixed(0)} s`,
);

console.log('\nper application   jobs  GPU-h goodput  GPU-h pollux  excess  mean JCT goodput s  pollux s');
const apps = [...new Set(g.result.jobs.map((j) => j.application))].sort();
for (const app of apps) {
  const gj = g.result.jobs.filter((j) => j.application === app);
  const pj = p.result.jobs.filter((j) => j.application === app);
  console.log(
    `${app.padEnd(16)} ${String(gj.length).padStart(5)}  ${f1(gpuH(gj)).padStart(13)}  ${f1(gpuH(pj)).padStart(12)}  ${f1(gpuH(gj) - gpuH(pj)).padStart(6)}  ${meanJct(gj).toFixed(0).padStart(18)}  ${meanJct(pj).toFixed(0).padStart(8)}`,
  );
}

console.log('\nactive jobs in the round  GPU-h goodput  GPU-h pollux  excess');
for (const [, name] of ACTIVE_BANDS) {
  const a = g.byActive.get(name) ?? 0;
  const b = p.byActive.get(name) ?? 0;
  console.log(`${name.padEnd(24)}  ${f1(a).padStart(13)}  ${f1(b).padStart(12)}  ${f1(a - b).padStart(6)}`);
}

console.log(`\nlargest excess: job  GPU-h goodput/pollux  JCT s goodput/pollux  restarts goodput/pollux`);
const pollux = new Map(p.result.jobs.map((j) => [j.name, j]));
const excess = g.result.jobs
  .map((j) => ({ j, q: pollux.get(j.name)! }))
  .sort((a, b) => b.j.attained_gpu_s - b.q.attained_gpu_s - (a.j.attained_gpu_s - a.q.attained_gpu_s));
for (const { j, q } of excess.slice(0, Number(values.top))) {
  console.log(
    `${j.name.padEnd(20)} ${f1(j.attained_gpu_s / 3600).padStart(6)} / ${f1(q.attained_gpu_s / 3600).padEnd(6)}  ${j.jct_s.toFixed(0).padStart(7)} / ${q.jct_s.toFixed(0).padEnd(7)}  ${String(j.restarts).padStart(4)} / ${q.restarts}`,
  );
}
