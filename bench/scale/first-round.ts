/**
 * The goodput policy's first rounds in a fresh process (issue #49), with the CPU time of the main
 * thread beside the process's and the wall time: on a shared machine the wall time of the first
 * round follows the load (other processes take the cores that V8's compiler and collector threads
 * would use), while the main thread's CPU time is what the round costs where those threads have a
 * core of their own. Same generators and feedback as `bench:scale`'s cases
 * (bench/generated-cluster.ts `generateCase`); one process per run, so every first round is a cold
 * one. With several --builds (built checkouts, e.g. a `git worktree` of the commit before), their
 * processes alternate run by run on the same generated cluster, so that a change is compared with
 * the build before under the same load.
 * Flags: --types 1|4, --nodes 512 (x 4 GPUs), --jobs 5000, --rounds 2, --runs 5 (processes per
 * build), --builds DIR,... (default: this build), --data DIR (Sia's, for --types 4), --json.
 * Node's own flags given to this script (e.g. a V8 flag whose effect is measured) are given to
 * every measured process too, and printed (`node_flags`).
 * Main-thread CPU is read from Linux's /proc/self/task/<pid>/schedstat (null elsewhere).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Allocation } from '../../src/core/cluster.js';
import type { createPolicy as CreatePolicy } from '../../src/policy/registry.js';
import { percentile } from '../../src/sim/metrics.js';
import { benchArgs, positiveIntOrExit, switchFlag, textFlag } from '../bench-args.js';
import { feedBack, generateCase, roundSnapshot } from '../generated-cluster.js';
import { caseTracesDir } from './cases.js';
import { mainThreadCpuMs } from './main-thread.js';

const USAGE = `
usage: node dist/bench/scale/first-round.js [--types 1] [--nodes 512] [--jobs 5000] [--rounds 2] [--runs 5]
                                            [--builds DIR,DIR] [--data DIR] [--json]
The goodput policy's decide() on one GPU type or four (bench:scale's cases, --nodes x 4 GPUs), a
fresh process per run: per round the main thread's CPU time, the process's CPU time and the wall
time (ms); then the median and the minimum of each over the runs, for the first round and the later
ones. --builds: roots of built checkouts (npx tsc run there) whose policies are compared, their
processes alternating (default: this one). Node's flags given to this script (node FLAG
first-round.js ...) are given to the measured processes too.
`;
const values = benchArgs(USAGE, {
  types: textFlag('1'),
  nodes: textFlag('512'),
  jobs: textFlag('5000'),
  rounds: textFlag('2'),
  runs: textFlag('5'),
  builds: textFlag(''),
  data: textFlag(''),
  json: switchFlag(),
  child: switchFlag(),
  root: textFlag(''),
});
const nodes = positiveIntOrExit(values.nodes, 'nodes');
const jobs = positiveIntOrExit(values.jobs, 'jobs');
const rounds = positiveIntOrExit(values.rounds, 'rounds');
const runs = positiveIntOrExit(values.runs, 'runs');
function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}
const types: 1 | 4 =
  values.types === '1' ? 1 : values.types === '4' ? 4 : fail(`--types must be 1 or 4 (got ${values.types})`);
if (types === 4 && nodes % 32 !== 0) fail(`--types 4 needs --nodes a multiple of 32 (got ${nodes})`);

/** This build's root: dist/bench/scale/first-round.js is three folders below it. */
const thisRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
const registryOf = (root: string): string => join(root, 'dist', 'src', 'policy', 'registry.js');

/** One round's times (ms): main thread CPU (null off Linux), process CPU, wall. */
type RoundTimes = [number | null, number, number];

async function child(root: string, tracesDir: string): Promise<RoundTimes[]> {
  const cluster = generateCase(types, nodes * 4, jobs, tracesDir);
  // The policy of the build under test; the cluster is this build's, the same for every build.
  const { createPolicy } = (await import(pathToFileURL(registryOf(root)).href)) as {
    createPolicy: typeof CreatePolicy;
  };
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

const tracesDir = caseTracesDir(types, values.data || undefined);
if (values.child) {
  console.log(JSON.stringify({ node_flags: process.execArgv, rounds: await child(values.root, tracesDir) }));
} else {
  const builds = values.builds === '' ? [thisRoot] : values.builds.split(',').map((b) => resolve(b));
  for (const root of builds)
    if (!existsSync(registryOf(root)))
      fail(`${root}: not a built checkout (no ${registryOf(root)}; run npx tsc there)`);
  const script = fileURLToPath(import.meta.url);
  const all = builds.map((): RoundTimes[][] => []);
  /** The flags the measured processes ran with, as they report them. */
  let childFlags: string[] = [];
  for (let run = 0; run < runs; run++) {
    builds.forEach((root, b) => {
      const args = [script, '--child', '--root', root, '--types', `${types}`, '--nodes', `${nodes}`];
      args.push('--jobs', `${jobs}`, '--rounds', `${rounds}`, ...(values.data ? ['--data', values.data] : []));
      const result = spawnSync(process.execPath, [...process.execArgv, ...args], { encoding: 'utf8' });
      if (result.status !== 0) {
        console.error(`error: run ${run + 1} of ${root} failed: ${result.stderr.trim().split('\n').pop() ?? ''}`);
        process.exit(1);
      }
      const out = JSON.parse(result.stdout) as { node_flags: string[]; rounds: RoundTimes[] };
      childFlags = out.node_flags;
      all[b]!.push(out.rounds);
    });
  }
  const summary = (runsOfBuild: RoundTimes[][], pick: (r: RoundTimes[]) => RoundTimes[]) => {
    const rows = runsOfBuild.flatMap(pick);
    const stat = (k: 0 | 1 | 2) => {
      const xs = rows.map((r) => r[k]).filter((x): x is number => x !== null);
      return xs.length === 0
        ? null
        : { p50: Math.round(percentile(xs, 50) * 10) / 10, min: Math.round(Math.min(...xs) * 10) / 10 };
    };
    return { main_cpu_ms: stat(0), cpu_ms: stat(1), wall_ms: stat(2) };
  };
  const results = builds.map((root, b) => ({
    root,
    first: summary(all[b]!, (r) => r.slice(0, 1)),
    later: summary(all[b]!, (r) => r.slice(1)),
    all: all[b]!,
  }));
  const head = { types, nodes, gpus: nodes * 4, jobs, runs, rounds, node_flags: childFlags };
  // The first build's figures also at the top level (this script's output before --builds).
  if (values.json) console.log(JSON.stringify({ ...head, ...results[0]!, builds: results }));
  else {
    const line = (s: ReturnType<typeof summary>) =>
      (['main_cpu_ms', 'cpu_ms', 'wall_ms'] as const)
        .map((k) => `${k.replace('_ms', '')} p50 ${s[k]?.p50 ?? '-'} min ${s[k]?.min ?? '-'} ms`)
        .join(', ');
    const flags = childFlags.length > 0 ? `, node ${childFlags.join(' ')}` : '';
    console.log(
      `${types} type(s), ${nodes * 4} GPUs, ${jobs} jobs, ${runs} processes x ${rounds} rounds per build${flags}`,
    );
    for (const r of results) {
      if (builds.length > 1) console.log(`${r.root}:`);
      console.log(`  first round: ${line(r.first)}`);
      if (rounds > 1) console.log(`  later rounds: ${line(r.later)}`);
    }
  }
}
