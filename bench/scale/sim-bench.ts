/**
 * bench:scale's simulator part (issue #49, item 4): a day of a Philly-derived workload at the
 * size of a large lab. The Pollux workloads (160 jobs over 8 hours on 64 GPUs each, derived from
 * Microsoft's Philly trace) are laid end to end to cover the day and copied once per 64 GPUs,
 * each copy's submissions jittered (up to 10 minutes; seeded, so the day is the same every run),
 * so the arrival rate per GPU is the original's. The simulator (src/sim/simulator.ts) replays it
 * on the cluster until every job has completed, or until the wall-time limit, and reports when
 * the simulated clock passed the day (the figure: the day replayed within 10 minutes;
 * jobs submitted late in the day still run past it), wall and CPU time, rounds, jobs and the time
 * in the policy's decide().
 */
import { ProgressBar, type ProgressSink } from '../../src/cli/commands/sim-progress.js';
import { findPolicy } from '../../src/policy/registry.js';
import type { Policy } from '../../src/policy/policy.js';
import { simulate } from '../../src/sim/simulator.js';
import { jitterSubmissions, loadWorkload, type Workload } from '../../src/sim/workload.js';
import { packagePath } from '../../src/util/package-root.js';

/** Seconds one Pollux workload spans (its last submission is at about 8 hours). */
const WINDOW_S = 8 * 3600;
/** GPUs the Pollux workloads were made for. */
const BASE_GPUS = 64;

/** What the simulator part measures, as --json prints it under "sim". */
export interface SimFigures {
  gpus: number;
  hours: number;
  jobs: number;
  policy: string;
  /** Whether every job completed within the wall-time limit. */
  finished: boolean;
  /** Wall seconds until the simulated clock passed `hours` (the day replayed); null if it did not within the limit. */
  day_wall_s: number | null;
  /** Jobs completed when the clock passed the day (null as day_wall_s). */
  day_completed: number | null;
  limit_s: number;
  wall_s: number;
  cpu_s: number;
  rounds: number;
  /** Simulated hours when it ended (or was stopped). */
  simulated_h: number;
  completed: number;
  /** Wall seconds in decide(), and its slowest round. */
  decide_s: number;
  decide_max_ms: number;
  /** Average JCT (s) of the jobs, when finished. */
  avg_jct_s: number | null;
}

/** `hours` of Pollux workloads end to end, copied `copies` times with jittered submissions. */
export function scaledDay(copies: number, hours: number): Workload {
  const windows = Math.ceil((hours * 3600) / WINDOW_S);
  const jobs: Workload['jobs'] = [];
  for (let w = 0; w < windows; w++) {
    const base = loadWorkload(packagePath('data', 'pollux', 'workloads', `workload-${(w % 4) + 1}.csv`));
    for (let c = 0; c < copies; c++) {
      const copy = jitterSubmissions(base, 1200, 1 + w * 100_003 + c);
      for (const j of copy.jobs) {
        const submit_s = j.submit_s + w * WINDOW_S;
        if (submit_s < hours * 3600) jobs.push({ ...j, name: `${j.name}.w${w}.c${c}`, submit_s });
      }
    }
  }
  jobs.sort((a, b) => a.submit_s - b.submit_s);
  return { file: `pollux workloads x${copies}, ${hours} h`, jobs };
}

class Stop extends Error {}

/**
 * Simulates a day on `gpus` GPUs (4 per node) under `policyName`, stopping after `limit_s` of
 * wall time. With `progress` (stderr in bench:scale), the CLI's progress bar shows how far it has
 * got: a bar on a terminal, else a line every `progress_every_s` (default 30) of wall time.
 */
export function runSimBench(o: {
  gpus: number;
  hours: number;
  policy: string;
  limit_s: number;
  progress?: ProgressSink;
  progress_every_s?: number;
}): SimFigures {
  const workload = scaledDay(Math.max(1, Math.round(o.gpus / BASE_GPUS)), o.hours);
  const bar =
    o.progress &&
    new ProgressBar(
      `sim, ${workload.jobs.length} jobs on ${o.gpus} GPUs`,
      1,
      o.progress,
      Date.now,
      (o.progress_every_s ?? 30) * 1000,
    );
  const inner = findPolicy(o.policy)!.create({ seed: 1 });
  let decide_ms = 0;
  let decide_max_ms = 0;
  const timed: Policy = Object.create(inner) as Policy;
  timed.decide = (snapshot) => {
    const t = performance.now();
    const d = inner.decide(snapshot);
    const ms = performance.now() - t;
    decide_ms += ms;
    decide_max_ms = Math.max(decide_max_ms, ms);
    return d;
  };
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  let rounds = 0;
  let now_s = 0;
  let completed = 0;
  let avg_jct_s: number | null = null;
  let finished = true;
  let day_wall_s: number | null = null;
  let day_completed: number | null = null;
  try {
    const result = simulate(workload, o.policy, timed, {
      nodes: o.gpus / 4,
      gpus_per_node: 4,
      onRound: (p) => {
        rounds++;
        now_s = p.now_s;
        completed = p.completed;
        if (day_wall_s === null && now_s >= o.hours * 3600) {
          day_wall_s = Math.round((performance.now() - start) / 100) / 10;
          day_completed = completed;
        }
        bar?.update({ index: 0, ...p, done: false });
        if (performance.now() - start > o.limit_s * 1000) throw new Stop();
      },
    });
    avg_jct_s = Math.round(result.jobs.reduce((s, j) => s + j.jct_s, 0) / result.jobs.length);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    finished = false;
  } finally {
    bar?.finish();
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    gpus: o.gpus,
    hours: o.hours,
    jobs: workload.jobs.length,
    policy: o.policy,
    finished,
    day_wall_s,
    day_completed,
    limit_s: o.limit_s,
    wall_s: Math.round((performance.now() - start) / 100) / 10,
    cpu_s: Math.round((cpu.user + cpu.system) / 100_000) / 10,
    rounds,
    simulated_h: Math.round((now_s / 3600) * 10) / 10,
    completed,
    decide_s: Math.round(decide_ms / 100) / 10,
    decide_max_ms: Math.round(decide_max_ms),
    avg_jct_s,
  };
}
