/** Per-(load, workload) figures of one policy as the policy benchmarks run, save and read them. */
import { readFileSync } from 'node:fs';
import { runParallel, type SimTask } from '../src/sim/parallel.js';
import type { WorkloadReport } from '../src/sim/run-workload.js';

/** Figures of one policy on one (load, workload), averaged over the runs (seeds) behind it. */
export interface ComparisonRow {
  load: string;
  k: number;
  avg_jct_s: number;
  p99_jct_s: number;
  makespan_s: number;
  ftf_worst: number;
  ftf_unfair_share: number;
  restarts: number;
  gpu_hours: number;
}

/** Key of a (load, workload) pair in the maps the benchmarks build. */
export const pairKey = (load: string, k: number): string => `${load}/${k}`;

/** The mean of `runs` (at least one) as one row of (load, k). */
export function meanRow(load: string, k: number, runs: readonly WorkloadReport[]): ComparisonRow {
  const mean = (f: (r: WorkloadReport) => number): number => runs.reduce((s, r) => s + f(r), 0) / runs.length;
  return {
    load,
    k,
    avg_jct_s: mean((r) => r.avg_jct_s),
    p99_jct_s: mean((r) => r.p99_jct_s),
    makespan_s: mean((r) => r.makespan_s),
    ftf_worst: mean((r) => r.ftf_worst),
    ftf_unfair_share: mean((r) => r.ftf_unfair_share),
    restarts: mean((r) => r.restarts),
    gpu_hours: mean((r) => r.gpu_hours),
  };
}

/**
 * Rows saved by `bench:policy-compare --save-pollux / --save-goodput`; exits with a one-line
 * message (status 2) when the file cannot be read, so a bad path fails before any long run.
 */
export function readSavedRows(file: string): ComparisonRow[] {
  try {
    const rows: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!Array.isArray(rows)) throw new Error('not a JSON array of rows');
    return rows as ComparisonRow[];
  } catch (error) {
    console.error(
      `error: ${file}: cannot read saved results (${(error as Error).message}); write it with bench:policy-compare --save-pollux or --save-goodput.`,
    );
    process.exit(2);
  }
}

/** Runs `tasks` in worker threads (runParallel), counting finished runs on stderr. */
export async function runWithProgress(tasks: readonly SimTask[], concurrency: number): Promise<WorkloadReport[]> {
  const started = performance.now();
  let done = 0;
  const reports = await runParallel(
    tasks,
    (p) => {
      if (!p.done) return;
      done++;
      process.stderr.write(
        `\r${done}/${tasks.length} runs done (${((performance.now() - started) / 1000).toFixed(0)} s)`,
      );
    },
    concurrency,
  );
  process.stderr.write('\n');
  return reports;
}
