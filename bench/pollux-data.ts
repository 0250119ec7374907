/** The Pollux artifact's workloads and published results, as the benchmarks read them. */
import { readFileSync } from 'node:fs';
import { packagePath } from '../src/util/package-root.js';

/** Published figures of one `<policy>-<load>` run: average JCT and JCT per job, by workload. */
export interface PublishedLoad {
  avg_jct_s: Record<string, number>;
  job_jct_s: Record<string, Record<string, number>>;
}

/** data/pollux/published-results.json, by `<policy>-<load>` (e.g. `pollux-1.0`). */
export function publishedResults(): Record<string, PublishedLoad> {
  return (
    JSON.parse(readFileSync(packagePath('data', 'pollux', 'published-results.json'), 'utf8')) as {
      jobload: Record<string, PublishedLoad>;
    }
  ).jobload;
}

/** The CSV of workload `k` at `load` (load 1.0 lives in workloads/, the others in workloads-<load>/). */
export function workloadFile(load: string, k: number): string {
  return packagePath('data', 'pollux', load === '1.0' ? 'workloads' : `workloads-${load}`, `workload-${k}.csv`);
}
