import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { packagePath } from '../util/package-root.js';
import { parseCsv } from './csv.js';

/** Step and sync time (s) of one (nodes, replicas, per-GPU batch) query. */
export type StepSync = readonly [step_time_s: number, sync_time_s: number];

/** Key of an (n, r, b) query with integer b; n <= 99, r <= 999, b < 65536. */
export function ndKey(num_nodes: number, num_replicas: number, local_bsz: number): number {
  return (num_nodes * 1000 + num_replicas) * 65536 + local_bsz;
}

let cached: Map<string, Map<number, StepSync>> | undefined;

/**
 * The throughput values the original simulator computes for placements of 5 or more nodes
 * (scipy LinearNDInterpolator over a degenerate point set, whose triangulation no other library
 * reproduces exactly), precomputed for every reachable integer query; see data/pollux/SOURCES.md.
 * Loaded once per process on first use (about 140k rows), keyed by application then `ndKey`.
 */
export function ndInterpTable(): Map<string, Map<number, StepSync>> {
  if (cached) return cached;
  const file = packagePath('data', 'pollux', 'nd_interp_table.csv.gz');
  const text = gunzipSync(readFileSync(file)).toString('utf8');
  const table = parseCsv(text, file, [
    'application',
    'num_nodes',
    'num_replicas',
    'local_bsz',
    'step_time',
    'sync_time',
  ]);
  const [app, n, r, b, step, sync] = [
    'application',
    'num_nodes',
    'num_replicas',
    'local_bsz',
    'step_time',
    'sync_time',
  ].map((c) => table.column(c)) as [number, number, number, number, number, number];
  const byApp = new Map<string, Map<number, StepSync>>();
  for (const row of table.rows) {
    const c = row.cells;
    let m = byApp.get(c[app]!);
    if (!m) byApp.set(c[app]!, (m = new Map()));
    m.set(ndKey(Number(c[n]), Number(c[r]), Number(c[b])), [Number(c[step]), Number(c[sync])]);
  }
  cached = byApp;
  return byApp;
}
