/**
 * `npm run bench:scale`: decision time of the goodput policy at the scale of a large lab (issue
 * #49). Cases: one GPU type (bench:policy's generator: the six Pollux applications, 4-GPU nodes)
 * and four types (Sia's applications and types aws/rtx/dgx/dgx-ext, a quarter of the GPUs each),
 * at 2,048 GPUs / 5,000 jobs and 16,384 GPUs / 40,000 jobs. Per case: 8 rounds (--rounds) from
 * random initial allocations, each decision fed back; prints the first round's wall time, p99
 * wall and CPU time over the rounds (and the main thread's part of the CPU time), and the median
 * gap of the decision's objective to the bound the policy reports (PolicyDecision.diagnostics),
 * with the targets of issue #49.
 * Flags: --quick (64 GPUs, 200 jobs, 3 rounds: a smoke run), --cases one-2048,one-16384,
 * four-2048,four-16384 (which to run), --data DIR (Sia data, default ../shared/data/sia or
 * ../../shared/data/sia), --distinct-models (every job's models its own: generated-cluster.ts
 * `distinctModels`), --json (one object: {"cases": [...], "server": {...}}).
 * The server part (bench/scale/server-bench.ts): a server process on a store of 40,000 jobs (2,000
 * running on 16,384 GPUs): start, rounds, report latency, `goodput ls`/`show`, dashboard pages;
 * --server-only runs only it, --skip-server leaves it out, --server-load-s S (default 60) and
 * --server-policy NAME (default goodput) tune it.
 * The simulator part (bench/scale/sim-bench.ts): a day of the Philly-derived Pollux workloads,
 * copied once per 64 GPUs, on 16,384 GPUs, stopped after --sim-limit-s (default 600); --sim-only
 * runs only it, --skip-sim leaves it out, --sim-policy NAME (default goodput), --sim-gpus N.
 * Progress lines go to stderr with --json, so that stdout holds only the JSON object.
 */
import { loadavg } from 'node:os';
import type { Allocation } from '../src/core/cluster.js';
import type { Policy } from '../src/policy/policy.js';
import { createPolicy } from '../src/policy/registry.js';
import { validateDecision } from '../src/policy/validate-decision.js';
import { percentile } from '../src/sim/metrics.js';
import { benchArgs } from './bench-args.js';
import { runServerBench, SERVER_TARGETS, type ServerFigures } from './scale/server-bench.js';
import { caseTracesDir, scaleCase } from './scale/cases.js';
import { mainThreadCpuMs } from './scale/main-thread.js';
import { runSimBench, type SimFigures } from './scale/sim-bench.js';
import { feedBack, generateCase, roundSnapshot, type GeneratedCluster } from './generated-cluster.js';

const USAGE = `
usage: npm run bench:scale -- [--quick] [--rounds 8] [--cases LIST] [--data DIR] [--distinct-models] [--json]
                              [--server-only | --skip-server] [--server-load-s 60] [--server-policy goodput]
                              [--server-policy-thread auto]
Decision time of the goodput policy at 2,048 GPUs / 5,000 jobs and 16,384 GPUs / 40,000 jobs,
on one GPU type and on four (Sia's applications). --cases: one-2048,one-16384,four-2048,four-16384
(default all); --quick: 64 GPUs and 200 jobs per case, 3 rounds. --distinct-models: every job's
models its own (the generators copy a few fitted models to every job; jobs that fit themselves
each have one, and the policy computes a speedup table per model).
Then the server at that size: a server process on a store of 40,000 jobs (2,000 running on 16,384
GPUs, reporting every 30 s): start, rounds end to end, report p99, goodput ls/show, dashboard pages
(--quick: 2,000 jobs, 100 running on 1,024 GPUs, 20 s). --server-only: only the server part.
--server-policy-thread on|off|auto: where its policy decides (goodput up --policy-thread).
Then the simulator: a day of the Pollux workloads copied once per 64 GPUs on 16,384 GPUs (--sim-gpus),
stopped after --sim-limit-s 600 (--quick: 256 GPUs, 60 s); --sim-only, --skip-sim, --sim-policy NAME.
Progress (each case, the server's steps) goes to stdout with the figures, to stderr with --json;
the simulation's progress bar (a line every 30 s where stderr is not a terminal) to stderr.
`;
const values = benchArgs(USAGE, {
  quick: { type: 'boolean', default: false },
  rounds: { type: 'string' },
  cases: { type: 'string', default: 'one-2048,one-16384,four-2048,four-16384' },
  data: { type: 'string' },
  json: { type: 'boolean', default: false },
  'server-only': { type: 'boolean', default: false },
  'skip-server': { type: 'boolean', default: false },
  'server-load-s': { type: 'string' },
  'server-policy': { type: 'string', default: 'goodput' },
  'server-policy-thread': { type: 'string', default: 'auto' },
  'sim-only': { type: 'boolean', default: false },
  'skip-sim': { type: 'boolean', default: false },
  'sim-gpus': { type: 'string' },
  'sim-limit-s': { type: 'string' },
  'sim-policy': { type: 'string', default: 'goodput' },
  'distinct-models': { type: 'boolean', default: false },
});

/** Targets of issue #49: p99 ms by (types, GPUs). */
const TARGET_P99_MS: Record<string, number> = { '1/2048': 100, '1/16384': 1000, '4/2048': 200, '4/16384': 2000 };
const TARGET_GAP = 0.05;

interface CaseSpec {
  name: string;
  types: 1 | 4;
  gpus: number;
  jobs: number;
}

/** One measured case, as --json prints it. */
export interface ScaleCase {
  types: 1 | 4;
  gpus: number;
  jobs: number;
  rounds: number;
  first_round_ms: number;
  p99_ms: number;
  p99_cpu_ms: number;
  first_round_cpu_ms: number;
  /**
   * The main thread's part of the CPU times (scale/main-thread.ts; null off Linux): the rest is
   * V8's compiler and collector threads, most of it in a first round.
   */
  first_round_main_cpu_ms: number | null;
  p99_main_cpu_ms: number | null;
  later_p50_ms: number;
  later_p50_cpu_ms: number;
  /** Median over rounds of (bound - objective) / |bound|; null where the policy reports no bound. */
  gap_p50: number | null;
  gap_max: number | null;
  /** How the rounds were decided (diagnostics.method), e.g. exact, relaxed. */
  methods: string[];
  running_after: number;
  target_p99_ms: number | null;
  /** One-minute load average of the machine at the case's start and end (wall times depend on it). */
  load_average: [number, number];
}

const quick = values.quick;
const rounds = Number(values.rounds ?? (quick ? 3 : 8));
const names = [...new Set(values.cases.split(',').map((n) => (quick ? n.replace(/-\d+$/, '-64') : n)))];
const specs: CaseSpec[] = names.map((name) => {
  const c = scaleCase(name);
  return { name, types: c.types, gpus: c.gpus, jobs: quick ? 200 : c.jobs };
});

function generate(spec: CaseSpec): GeneratedCluster {
  return generateCase(
    spec.types,
    spec.gpus,
    spec.jobs,
    caseTracesDir(spec.types, values.data),
    values['distinct-models'],
  );
}

async function runCase(spec: CaseSpec): Promise<ScaleCase> {
  const cluster = generate(spec);
  const loadStart = loadavg()[0]!;
  // A fresh policy per case, as after a server start: the first round has no memo.
  const policy: Policy = await createPolicy('goodput', { seed: 1 });
  let allocations: Record<string, Allocation> = cluster.allocations;
  const wall: number[] = [];
  const cpu: number[] = [];
  const mainCpu: number[] = [];
  const gaps: number[] = [];
  const methods = new Set<string>();
  for (let round = 0; round < rounds; round++) {
    const snapshot = roundSnapshot(cluster, round, allocations);
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadCpuMs();
    const decision = policy.decide(snapshot);
    const main1 = mainThreadCpuMs();
    const used = process.cpuUsage(cpu0);
    wall.push(performance.now() - start);
    cpu.push((used.user + used.system) / 1000);
    if (main0 !== null && main1 !== null) mainCpu.push(main1 - main0);
    const check = validateDecision(snapshot, decision.allocations);
    if (!check.ok) throw new Error(`${spec.name}: invalid decision in round ${round}: ${check.reason}`);
    const d = decision.diagnostics;
    if (d?.gap !== undefined) gaps.push(d.gap);
    if (d?.method !== undefined) methods.add(d.method);
    allocations = decision.allocations;
    feedBack(cluster.jobs, allocations);
  }
  const key = `${spec.types}/${spec.gpus}`;
  return {
    types: spec.types,
    gpus: spec.gpus,
    jobs: spec.jobs,
    rounds,
    first_round_ms: round1(wall[0]!),
    p99_ms: round1(percentile(wall, 99)),
    p99_cpu_ms: round1(percentile(cpu, 99)),
    first_round_cpu_ms: round1(cpu[0]!),
    first_round_main_cpu_ms: mainCpu.length === rounds ? round1(mainCpu[0]!) : null,
    p99_main_cpu_ms: mainCpu.length === rounds ? round1(percentile(mainCpu, 99)) : null,
    later_p50_ms: round1(percentile(wall.slice(1), 50)),
    later_p50_cpu_ms: round1(percentile(cpu.slice(1), 50)),
    gap_p50: gaps.length > 0 ? Number(percentile(gaps, 50).toFixed(5)) : null,
    gap_max: gaps.length > 0 ? Number(Math.max(...gaps).toFixed(5)) : null,
    methods: [...methods],
    running_after: Object.keys(allocations).length,
    target_p99_ms: quick ? null : (TARGET_P99_MS[key] ?? null),
    load_average: [round1(loadStart), round1(loadavg()[0]!)],
  };
}

/** ", main thread N" where the main thread's CPU time was read. */
function mainPart(ms: number | null): string {
  return ms === null ? '' : `, main thread ${ms}`;
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/**
 * A line of progress: on stdout with the text figures, on stderr with --json (stdout holds only
 * the JSON object), so that a run of many minutes is never silent.
 */
function progress(line: string): void {
  if (values.json) console.error(line);
  else console.log(line);
}

const cases: ScaleCase[] = [];
const only = values['server-only'] || values['sim-only'];
for (const spec of only ? [] : specs) {
  const c = await runCase(spec);
  cases.push(c);
  if (values.json)
    progress(
      `${spec.name}: first round ${c.first_round_ms} ms (CPU ${c.first_round_cpu_ms}), p99 ${c.p99_ms} ms (CPU ${c.p99_cpu_ms})`,
    );
  else {
    // The issue's target holds for the wall time and the CPU time alike.
    const verdict = (ms: number): string =>
      c.target_p99_ms === null
        ? ''
        : ` (target <= ${c.target_p99_ms} ms: ${ms <= c.target_p99_ms ? 'met' : 'NOT met'})`;
    const gap =
      c.gap_p50 === null
        ? 'no bound'
        : `gap p50 ${(c.gap_p50 * 100).toFixed(2)}% max ${((c.gap_max ?? 0) * 100).toFixed(2)}% (target p50 <= ${TARGET_GAP * 100}%: ${c.gap_p50 <= TARGET_GAP ? 'met' : 'NOT met'})`;
    console.log(
      `${c.types} type(s), ${c.gpus} GPUs, ${c.jobs} jobs, ${c.rounds} rounds: first round ${c.first_round_ms} ms ` +
        `(CPU ${c.first_round_cpu_ms}${mainPart(c.first_round_main_cpu_ms)}), p99 ${c.p99_ms} ms${verdict(c.p99_ms)}, ` +
        `CPU p99 ${c.p99_cpu_ms} ms${verdict(c.p99_cpu_ms)}${mainPart(c.p99_main_cpu_ms)}, later p50 ` +
        `${c.later_p50_ms} ms (CPU ${c.later_p50_cpu_ms}); ${gap}; ${c.running_after} jobs running; ${c.methods.join('/') || '-'}; ` +
        `load average ${c.load_average.join(' -> ')}`,
    );
  }
}
let server: ServerFigures | null = null;
if (!values['skip-server'] && !values['sim-only']) {
  server = await runServerBench({
    ...(quick
      ? { jobs: 2000, running: 100, queued: 100, nodes: 256, gpus_per_node: 4 }
      : { jobs: 40_000, running: 2000, queued: 1000, nodes: 4096, gpus_per_node: 4 }),
    policy: values['server-policy'],
    policy_thread: values['server-policy-thread'],
    interval_s: 5,
    load_s: Number(values['server-load-s'] ?? (quick ? 20 : 60)),
    report_every_s: 30,
    log: progress,
  });
  if (!values.json) printServer(server);
}
let sim: SimFigures | null = null;
if (!values['skip-sim'] && !values['server-only']) {
  sim = runSimBench({
    gpus: Number(values['sim-gpus'] ?? (quick ? 256 : 16_384)),
    hours: 24,
    policy: values['sim-policy'],
    limit_s: Number(values['sim-limit-s'] ?? (quick ? 60 : 600)),
    progress: process.stderr,
  });
  if (!values.json) {
    const day =
      sim.day_wall_s === null
        ? `the day (${sim.hours} simulated hours) not replayed within the ${sim.limit_s} s limit (target: within 600 s): NOT met`
        : `the day (${sim.hours} simulated hours) replayed in ${sim.day_wall_s} s wall (target <= 600 s: ${sim.day_wall_s <= 600 ? 'met' : 'NOT met'}), ${sim.day_completed} jobs completed by then`;
    console.log(
      `simulator, ${sim.gpus} GPUs, a day of ${sim.jobs} jobs, policy ${sim.policy}: ${day}; ` +
        `${sim.finished ? 'every job completed' : `stopped at the ${sim.limit_s} s limit`}` +
        ` after ${sim.wall_s} s wall (CPU ${sim.cpu_s} s), ${sim.rounds} rounds, ${sim.simulated_h} simulated hours, ` +
        `${sim.completed} jobs completed; decide() ${sim.decide_s} s in all, slowest ${sim.decide_max_ms} ms` +
        (sim.avg_jct_s !== null ? `; average JCT ${sim.avg_jct_s} s` : ''),
    );
  }
}
if (values.json) console.log(JSON.stringify({ cases, server, sim }, null, 2));

function printServer(s: ServerFigures): void {
  const t = SERVER_TARGETS;
  const met = (x: number, target: number) => `${x} ms (target <= ${target}: ${x <= target ? 'met' : 'NOT met'})`;
  console.log(
    `server, ${s.jobs} jobs (${s.running} running, ${s.queued} queued), ${s.gpus} GPUs, policy ${s.policy} (thread: ${s.policy_thread}):\n` +
      `  start ${met(s.start_ms, t.start_ms)}, CPU ${s.start_cpu_ms} ms; ${s.start_process_ms} ms from spawning the process\n` +
      `  rounds: ${s.rounds}, first ${s.first_round_ms} ms, p50 ${s.round_p50_ms} ms, max ${s.round_max_ms} ms; ` +
      `without the launches they led to (snapshot, decide, store): max ${met(s.round_max_without_launches_ms, t.round_ms)}; ` +
      `CPU first ${s.first_round_cpu_ms}, p50 ${s.round_cpu_p50_ms}, max ${s.round_cpu_max_ms} ms; parts p50 (wall): snapshot ${s.round_parts_p50_ms.snapshot}, decide ${s.round_parts_p50_ms.decide}, apply ${s.round_parts_p50_ms.apply} ms\n` +
      `  first round's parts: snapshot ${s.first_round_parts_ms.snapshot}, decide ${s.first_round_parts_ms.decide}, apply ${s.first_round_parts_ms.apply}, the launches it led to ${s.first_round_parts_ms.launch} ms\n` +
      `  reports: ${s.reports} (${s.report_errors} errors), p50 ${s.report_p50_ms} ms, p99 ${s.report_p99_ms} ms; ` +
      // The issue's target is for the reports during rounds (the ones a round may hold up).
      `p99 of those during rounds ${met(s.report_p99_during_rounds_ms, t.report_p99_ms)}; event loop blocks over 50 ms: ${s.event_loop_blocks_over_50ms}, longest ${s.event_loop_max_block_ms} ms\n` +
      `  goodput ls ${met(s.ls_first_page_ms, t.ls_ms)}, ls --state running ${s.ls_running_ms} ms, show ${s.show_ms} ms ` +
      `(API alone: ${s.api_ls_first_page_ms}, ${s.api_ls_running_ms}, ${s.api_show_ms} ms)\n` +
      `  dashboard first render: jobs ${met(s.dashboard_jobs_ms, t.render_ms)}, cluster ${met(s.dashboard_cluster_ms, t.render_ms)}` +
      ` (their data arrived at ${s.dashboard_jobs_data_ms} and ${s.dashboard_cluster_data_ms} ms)\n` +
      `  server CPU ${s.server_cpu_s} s over ${s.load_wall_s} s of load; load average ${s.loadavg.join(' ')}`,
  );
}
