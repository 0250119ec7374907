/**
 * Trace measurements for bench/predict.ts, as profile points and ground truth. Only this file
 * reads the traces: the models see profile points, the way a job reports them (sim-job.ts
 * observe(): accum = step - sync, optim = step).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProfilePoint } from '../src/goodput/types.js';
import type { TraceApplication } from '../src/sim/application.js';
import { numberCell, parseCsv } from '../src/sim/csv.js';

/** GPUs per node of the clusters of the workloads (16 nodes x 4 GPUs). */
export const GPUS_PER_NODE = 4;

/** One measured configuration of the traces. */
export interface Measured {
  num_nodes: number;
  num_replicas: number;
  local_bsz: number;
  step_time_s: number;
  sync_time_s: number;
}

/** The profile point a job reports for a measured configuration. */
export function toPoint(m: Measured): ProfilePoint {
  return {
    num_nodes: m.num_nodes,
    num_replicas: m.num_replicas,
    local_bsz: m.local_bsz,
    accum_step_time_s: m.step_time_s - m.sync_time_s,
    optim_step_time_s: m.step_time_s,
  };
}

/** The per-GPU batch sizes measured for `app` on one GPU, within the job's limits. */
export function localBatchGrid(app: TraceApplication, tracesDir: string): number[] {
  const file = join(tracesDir, app.name, 'placements.csv');
  const table = parseCsv(readFileSync(file, 'utf8'), file, ['placement', 'local_bsz']);
  const grid: number[] = [];
  for (const row of table.rows) {
    if (numberCell(table, row, 'placement') !== 1) continue;
    const b = numberCell(table, row, 'local_bsz');
    if (b >= app.min_local_bsz && b <= app.max_local_bsz) grid.push(b);
  }
  return grid;
}

/** `app` measured on `placement` (GPUs per node) at `local_bsz`, or undefined where the trace has no row. */
function measurePlacement(
  app: TraceApplication,
  placement: readonly number[],
  local_bsz: number,
): Measured | undefined {
  let stepSync: readonly [number, number];
  try {
    stepSync = app.throughput(placement, local_bsz);
  } catch {
    return undefined; // this placement's rows stop below local_bsz
  }
  const [step, sync] = stepSync;
  return {
    num_nodes: placement.length,
    num_replicas: placement.reduce((s, g) => s + g, 0),
    local_bsz,
    step_time_s: step,
    sync_time_s: sync,
  };
}

/**
 * What a job profiles before it spans several nodes: one node with `gpus` GPUs (default 1..4) at
 * every per-GPU batch of the grid (the sparse profile takes every `stride`-th batch).
 */
export function oneNodeMeasurements(
  app: TraceApplication,
  grid: readonly number[],
  gpus: readonly number[] = [1, 2, 3, 4],
  stride = 1,
): Measured[] {
  const out: Measured[] = [];
  for (const g of gpus) {
    for (let i = 0; i < grid.length; i += stride) {
      const m = measurePlacement(app, [g], grid[i] as number);
      if (m) out.push(m);
    }
  }
  return out;
}

/** scalability.csv of `app` (measured runs on 6 to 16 nodes). */
function scalabilityRows(app: TraceApplication, tracesDir: string): Measured[] {
  const file = join(tracesDir, app.name, 'scalability.csv');
  const table = parseCsv(readFileSync(file, 'utf8'), file, [
    'num_nodes',
    'num_replicas',
    'local_bsz',
    'step_time',
    'sync_time',
  ]);
  return table.rows.map((row) => ({
    num_nodes: numberCell(table, row, 'num_nodes'),
    num_replicas: numberCell(table, row, 'num_replicas'),
    local_bsz: numberCell(table, row, 'local_bsz'),
    step_time_s: numberCell(table, row, 'step_time'),
    sync_time_s: numberCell(table, row, 'sync_time'),
  }));
}

/**
 * Measured multi-node configurations of `app` on whole nodes of 4 GPUs with a node count in
 * `nodes`: placements.csv for 2-4 nodes, scalability.csv for more (measured rows only, never the
 * interpolated table). With `partial`, also every measured replica count below 4 per node
 * (2-4 nodes: placements packed as full as possible, e.g. 4,4,2).
 */
export function multiNodeMeasurements(
  app: TraceApplication,
  tracesDir: string,
  grid: readonly number[],
  nodes: readonly number[],
  partial = false,
): Measured[] {
  const out: Measured[] = [];
  const wanted = new Set(nodes);
  const inGrid = new Set(grid);
  for (const n of nodes) {
    if (n < 2 || n > 4) continue;
    const counts = partial ? Array.from({ length: (GPUS_PER_NODE - 1) * n + 1 }, (_, i) => n + i) : [GPUS_PER_NODE * n];
    for (const r of counts) {
      const placement = Array.from({ length: n }, (_, i) =>
        Math.min(GPUS_PER_NODE, Math.max(1, r - GPUS_PER_NODE * i - (n - i - 1))),
      );
      for (const b of grid) {
        const m = measurePlacement(app, placement, b);
        if (m) out.push(m);
      }
    }
  }
  for (const m of scalabilityRows(app, tracesDir)) {
    if (!wanted.has(m.num_nodes) || !inGrid.has(m.local_bsz)) continue;
    if (partial || m.num_replicas === GPUS_PER_NODE * m.num_nodes) out.push(m);
  }
  return out;
}
