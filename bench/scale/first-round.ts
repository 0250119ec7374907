/**
 * The goodput policy's first rounds on one GPU type in a fresh process (issue #49), with the CPU
 * time of the main thread beside the process's and the wall time: on a shared machine the wall
 * time of the first round follows the load (other processes take the cores that V8's compiler and
 * collector threads would use), while the main thread's CPU time is what the round costs where
 * those threads have a core of their own. Same generator and feedback as `bench:scale`'s one-type
 * cases (bench/generated-cluster.ts); one process per run, so every first round is a cold one.
 * Flags: --nodes 512 (4-GPU nodes), --jobs 5000, --rounds 2, --runs 5 (processes), --json.
 * Main-thread CPU is read from Linux's /proc/self/task/<pid>/schedstat (null elsewhere).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Allocation } from '../../src/core/cluster.js';
import { createPolicy } from '../../src/policy/registry.js';
import { percentile } from '../../src/sim/metrics.js';
import { benchArgs, switchFlag, textFlag } from '../bench-args.js';
import { feedBack, generateOneType, roundSnapshot } from '../generated-cluster.js';
import { mainThreadCpuMs } from './main-thread.js';

const USAGE = `
usage: node dist/bench/scale/first-round.js [--nodes 512] [--jobs 5000] [--rounds 2] [--runs 5] [--json]
The goodput policy's decide() on one GPU type (4-GPU nodes), a fresh process per run: per round the
main thread's CPU time, the process's CPU time and the wall time (ms); then the median and the
minimum of each over the runs, for the first round and the later ones.
`;
const values = benchArgs(USAGE, {
  nodes: textFlag('512'),
  jobs: textFlag('5000'),
  rounds: textFlag('2'),
  runs: textFlag('5'),
  json: switchFlag(),
  child: switchFlag(),
});
const nodes = Number(values.nodes);
const jobs = Number(values.jobs);
const rounds = Number(values.rounds);
const runs = Number(values.runs);
for (const [name, n] of [
  ['--nodes', nodes],
  ['--jobs', jobs],
  ['--rounds', rounds],
  ['--runs', runs],
] as const) {
  if (!Number.isInteger(n) || n < 1) {
    console.error(`error: ${name} must be a positive integer (got ${String(n)})`);
    process.exit(2);
  }
}

/** One round's times (ms): main thread CPU (null off Linux), process CPU, wall. */
type RoundTimes = [number | null, number, number];

async function child(): Promise<RoundTimes[]> {
  const cluster = generateOneType(nodes, 4, jobs);
  const policy = await createPolicy('goodput', { seed: 1 });
  let allocations: Record<string, Allocation> = cluster.allocations;
  const times: RoundTimes[] = [];
  for (let round = 0; round < rounds; round++) {
    const main0 = mainThreadCpuMs();
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    const decision = policy.decide(roundSnapshot(cluster, round, allocations));
    const wall = performance.now() - wall0;
    const cpu = process.cpuUsage(cpu0);
    const main1 = mainThreadCpuMs();
    times.push([main0 === null || main1 === null ? null : main1 - main0, (cpu.user + cpu.system) / 1000, wall]);
    allocations = decision.allocations;
    feedBack(cluster.jobs, allocations);
  }
  return times;
}

if (values.child) {
  console.log(JSON.stringify(await child()));
} else {
  const script = fileURLToPath(import.meta.url);
  const all: RoundTimes[][] = [];
  for (let run = 0; run < runs; run++) {
    const args = [script, '--child', '--nodes', `${nodes}`, '--jobs', `${jobs}`, '--rounds', `${rounds}`];
    const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
    if (result.status !== 0) {
      console.error(`error: run ${run + 1} failed: ${result.stderr.trim().split('\n').pop() ?? ''}`);
      process.exit(1);
    }
    all.push(JSON.parse(result.stdout) as RoundTimes[]);
  }
  const summary = (pick: (r: RoundTimes[]) => RoundTimes[]) => {
    const rows = all.flatMap(pick);
    const stat = (k: 0 | 1 | 2) => {
      const xs = rows.map((r) => r[k]).filter((x): x is number => x !== null);
      return xs.length === 0
        ? null
        : { p50: Math.round(percentile(xs, 50) * 10) / 10, min: Math.round(Math.min(...xs) * 10) / 10 };
    };
    return { main_cpu_ms: stat(0), cpu_ms: stat(1), wall_ms: stat(2) };
  };
  const first = summary((r) => r.slice(0, 1));
  const later = summary((r) => r.slice(1));
  if (values.json) console.log(JSON.stringify({ nodes, gpus: nodes * 4, jobs, runs, rounds, first, later, all }));
  else {
    const line = (s: ReturnType<typeof summary>) =>
      (['main_cpu_ms', 'cpu_ms', 'wall_ms'] as const)
        .map((k) => `${k.replace('_ms', '')} p50 ${s[k]?.p50 ?? '-'} min ${s[k]?.min ?? '-'} ms`)
        .join(', ');
    console.log(`${nodes * 4} GPUs, ${jobs} jobs, ${runs} processes x ${rounds} rounds`);
    console.log(`  first round: ${line(first)}`);
    if (rounds > 1) console.log(`  later rounds: ${line(later)}`);
  }
}
