/**
 * Mixed GPU types (docs/heterogeneous.md): goodput, sia and type-unaware pollux on the Sia
 * artifact's workloads and 64-GPU mixed cluster, beside the published numbers; and each typed
 * policy's decision time at 64 and 2,048 GPUs. Run:
 *   npm run bench:hetero -- [--data DIR] [--sets philly,saturn] [--workloads 1-8] [--policies goodput,sia,pollux] [--json]
 */
import { join } from 'node:path';
import { percentile } from '../src/sim/metrics.js';
import {
  clusterNodes,
  loadHeteroWorkload,
  parseClusterSpec,
  simulateHetero,
  type HeteroWorkloadJob,
} from '../src/sim/hetero/hetero-sim.js';
import { heteroPolicy, runHeteroWorkload, type HeteroReport } from '../src/sim/hetero/run-hetero.js';
import { loadHeteroApplications } from '../src/sim/hetero/typed-app.js';
import { GOODPUT_HETERO_DEFAULTS, type GoodputHeteroParams } from '../src/policy/sia/goodput-hetero.js';
import { benchArgs } from './bench-args.js';
import { siaDataDir } from './scale/cases.js';

const USAGE = `
usage: npm run bench:hetero -- [--data DIR] [--sets philly,saturn] [--workloads LIST]
                               [--policies goodput,sia,pollux] [--no-scale] [--strict-moves]
                               [--goodput-param NAME=VALUE ...] [--json]
Per trace set: average JCT, p99 JCT, makespan (h), GPU-hours per job and worst finish-time
fairness of each policy on the 64-GPU mixed cluster aws:6x4,rtx:3x8,dgx-ext:2x8, averaged over the
set's workloads, beside Sia's published Table 3; then the decision time p99 (ms) of each typed policy
at 64 GPUs (the largest p99 over those runs) and at 2,048 GPUs (the cluster x32, philly workload-1
copied 32 times: the same load per GPU; its first 180 rounds). --data: the Sia data directory (traces/, workloads/), default
../shared/data/sia. --workloads: which workload numbers of each set, e.g. 1-3 or 1,4 (default:
philly 1-8, saturn 1-5). --strict-moves: a move to other nodes restarts the job even with the
same GPUs per node (the artifact's simulator does not restart it). --goodput-param (repeatable):
a variant of the goodput policy's knobs (GOODPUT_HETERO_DEFAULTS), e.g. gpu_cost=0.0005 or
correct_profiles=0. A full run takes about 25
minutes on one core, pollux most of it.
`;

const CLUSTER = 'aws:6x4,rtx:3x8,dgx-ext:2x8';
const CLUSTER_X32 = 'aws:192x4,rtx:96x8,dgx-ext:64x8';
const SETS: Record<string, number> = { philly: 8, saturn: 5 };
/** Sia's pre-publication Table 3 (data/sia SOURCES.md): avg JCT h, p99 h, makespan h, GPU-h/job. */
const PUBLISHED: Record<string, Record<string, [number, number, number, number]>> = {
  philly: { sia: [0.6, 9.5, 14.2, 4.0], pollux: [1.0, 14.9, 24.5, 5.6] },
  saturn: { sia: [0.7, 10.9, 14.9, 4.8], pollux: [1.0, 15.0, 25.5, 5.9] },
};

const values = benchArgs(USAGE, {
  data: { type: 'string' },
  sets: { type: 'string', default: 'philly,saturn' },
  workloads: { type: 'string' },
  policies: { type: 'string', default: 'goodput,sia,pollux' },
  'no-scale': { type: 'boolean', default: false },
  'strict-moves': { type: 'boolean', default: false },
  'goodput-param': { type: 'string', multiple: true, default: [] },
  json: { type: 'boolean', default: false },
});

function numbers(spec: string, max: number): number[] {
  const out: number[] = [];
  for (const part of spec.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) {
      console.error(`error: --workloads: '${part}' is not N or N-M`);
      process.exit(2);
    }
    for (let i = Number(m[1]); i <= Number(m[2] ?? m[1]); i++) if (i <= max) out.push(i);
  }
  return out;
}

const dataDir = siaDataDir(values.data);
const traces = join(dataDir, 'traces');
const goodputParams: Partial<GoodputHeteroParams> = {};
for (const a of values['goodput-param']) {
  const m = /^([a-z_]+)=(-?[0-9.eE+-]+)$/.exec(a);
  if (!m || !(m[1]! in GOODPUT_HETERO_DEFAULTS) || !Number.isFinite(Number(m[2]))) {
    console.error(
      `error: --goodput-param '${a}': expected NAME=NUMBER with NAME one of ${Object.keys(GOODPUT_HETERO_DEFAULTS).join(', ')}`,
    );
    process.exit(2);
  }
  goodputParams[m[1] as keyof GoodputHeteroParams] = Number(m[2]);
}
const policies = values.policies.split(',');
const sets = values.sets.split(',');
const h = (s: number) => s / 3600;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface Row {
  set: string;
  policy: string;
  workloads: number;
  avg_jct_h: number;
  p99_jct_h: number;
  makespan_h: number;
  gpu_hours_per_job: number;
  ftf_worst: number;
  published?: { avg_jct_h: number; p99_jct_h: number; makespan_h: number; gpu_hours_per_job: number };
}

const rows: Row[] = [];
const decisions: Record<string, number[]> = {};
for (const set of sets) {
  const max = SETS[set] ?? 0;
  const list = numbers(values.workloads ?? `1-${max}`, max);
  for (const policy of policies) {
    const reports: HeteroReport[] = [];
    for (const n of list) {
      const file = join(dataDir, 'workloads', set, `workload-${n}.csv`);
      const t0 = Date.now();
      const r = await runHeteroWorkload(file, {
        policy,
        cluster: CLUSTER,
        traces_dir: traces,
        seed: 1,
        strict_moves: values['strict-moves'],
        goodput_params: goodputParams,
      });
      reports.push(r);
      (decisions[policy] ??= []).push(r.decision_p99_ms);
      if (!values.json)
        process.stderr.write(
          `${set} ${policy} workload-${n}: avg JCT ${h(r.avg_jct_s).toFixed(2)} h (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`,
        );
    }
    const pub = PUBLISHED[set]?.[policy];
    rows.push({
      set,
      policy,
      workloads: reports.length,
      avg_jct_h: h(mean(reports.map((r) => r.avg_jct_s))),
      p99_jct_h: h(mean(reports.map((r) => r.p99_jct_s))),
      makespan_h: h(mean(reports.map((r) => r.makespan_s))),
      gpu_hours_per_job: mean(reports.map((r) => r.gpu_hours_per_job)),
      ftf_worst: Math.max(...reports.map((r) => r.ftf_worst)),
      ...(pub
        ? { published: { avg_jct_h: pub[0], p99_jct_h: pub[1], makespan_h: pub[2], gpu_hours_per_job: pub[3] } }
        : {}),
    });
  }
}

/**
 * Decision time p99 at 2,048 GPUs: philly workload-1 copied 32 times (the same load per GPU as
 * at 64 GPUs), its first 180 rounds (3 h).
 */
async function decisionAtScale(policy: string): Promise<number> {
  const parts = parseClusterSpec(CLUSTER_X32);
  const apps = loadHeteroApplications(
    traces,
    parts.map((p) => p.type),
  );
  const base = loadHeteroWorkload(join(dataDir, 'workloads', 'philly', 'workload-1.csv'), apps);
  const jobs: HeteroWorkloadJob[] = [];
  for (let k = 0; k < 32; k++) for (const j of base) jobs.push({ ...j, name: `${j.name}-${k}` });
  const result = simulateHetero(jobs, await heteroPolicy(policy, 1, goodputParams), clusterNodes(parts), {
    max_rounds: 180,
  });
  return percentile(result.decision_ms, 99);
}

const scale: Record<string, { p99_ms_64: number; p99_ms_2048: number | null }> = {};
for (const policy of policies) {
  const at64 = decisions[policy] ?? [];
  scale[policy] = {
    p99_ms_64: at64.length ? Math.max(...at64) : NaN,
    p99_ms_2048: values['no-scale'] || policy === 'pollux' ? null : await decisionAtScale(policy),
  };
}

if (values.json) {
  console.log(JSON.stringify({ cluster: CLUSTER, rows, decision_time: scale }, null, 2));
} else {
  const f = (x: number | undefined, d = 2) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
  console.log(`cluster ${CLUSTER}; published = Sia draft Table 3`);
  console.log('set     policy   n  avgJCT_h (pub)   p99_h (pub)     makespan_h (pub)  GPUh/job (pub)  worstFTF');
  for (const r of rows) {
    const p = r.published;
    console.log(
      `${r.set.padEnd(7)} ${r.policy.padEnd(8)} ${String(r.workloads).padStart(2)}  ${f(r.avg_jct_h).padStart(5)} (${f(p?.avg_jct_h, 1)})`.padEnd(
        40,
      ) +
        `${f(r.p99_jct_h, 1).padStart(5)} (${f(p?.p99_jct_h, 1)})`.padEnd(16) +
        `${f(r.makespan_h, 1).padStart(5)} (${f(p?.makespan_h, 1)})`.padEnd(18) +
        `${f(r.gpu_hours_per_job).padStart(5)} (${f(p?.gpu_hours_per_job, 1)})`.padEnd(16) +
        f(r.ftf_worst),
    );
  }
  for (const set of sets) {
    const g = rows.find((r) => r.set === set && r.policy === 'goodput');
    const s = rows.find((r) => r.set === set && r.policy === 'sia');
    if (g && s)
      console.log(
        `${set}: goodput / sia avg JCT ${f(g.avg_jct_h / s.avg_jct_h, 3)}, GPU-hours ${f(g.gpu_hours_per_job / s.gpu_hours_per_job, 3)}`,
      );
  }
  console.log(
    'decision time p99 (ms): ' +
      policies
        .map(
          (p) =>
            `${p} 64 GPUs ${f(scale[p]!.p99_ms_64, 1)}, 2048 GPUs ${scale[p]!.p99_ms_2048 === null ? '-' : f(scale[p]!.p99_ms_2048!, 1)}`,
        )
        .join('; '),
  );
}
