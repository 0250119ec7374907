import { fitPerfParams } from '../goodput/fit.js';
import { batchTable, bestInTable, type BatchTable } from '../goodput/optimize.js';
import type { BatchLimits, GoodputModel, PerfParams, StepCorrection } from '../goodput/types.js';
import type { JobMode } from '../policy/policy.js';
import { findPolicy } from '../policy/registry.js';
import { memoizedFit, memoizedFitAndCorrect } from './fit-memo.js';
import type { AdaptiveHooks } from './sim-job.js';

export type { JobMode };

/**
 * Job mode of a policy: the one its factory declares; unknown (unregistered) policies get the
 * adaptive, model-driven mode. In adaptive mode ncf keeps a fixed 32768 on one GPU.
 */
export function jobModeFor(policy: string): JobMode {
  return findPolicy(policy)?.job_mode ?? 'adaptive';
}

interface KeptTable {
  correction: StepCorrection | undefined;
  /** By identity: a simulated application's limits are one object (TraceApplication.limits). */
  limits: BatchLimits;
  num_nodes: number;
  num_replicas: number;
  table: BatchTable;
}

/** Tables kept per fit (a memoized fit serves every copy of a job: a few placements each). */
const TABLES_PER_FIT = 8;
const tables = new WeakMap<PerfParams, KeptTable[]>();

/**
 * optimizeBatch's table for the model's fit and the placement, kept by the fit's objects (the
 * fit memo gives equal fits one object): a job re-picks its batch at every epoch with new
 * gradient statistics on the same fit and placement, and the candidates' throughputs were a
 * sixth of a simulated day at 16,384 GPUs (bench:scale). Exact: the table is a pure function of
 * what it is kept by.
 */
function tableFor(model: GoodputModel, num_nodes: number, num_replicas: number): BatchTable {
  let kept = tables.get(model.perf);
  if (!kept) tables.set(model.perf, (kept = []));
  for (const k of kept)
    if (
      k.correction === model.correction &&
      k.limits === model.limits &&
      k.num_nodes === num_nodes &&
      k.num_replicas === num_replicas
    )
      return k.table;
  const table = batchTable(model, num_nodes, num_replicas, model.limits.max_batch_size);
  if (kept.length >= TABLES_PER_FIT) kept.shift();
  kept.push({ correction: model.correction, limits: model.limits, num_nodes, num_replicas, table });
  return table;
}

const memoFit = memoizedFit((points) => fitPerfParams(points));

/**
 * Pollux agent emulation over goodput/: refit on all profile points (fits and their corrections
 * memoized by the points: fit-memo.ts), §3.4 batch choice.
 */
export const polluxHooks: AdaptiveHooks = {
  fit: memoFit,
  fitAndCorrect: memoizedFitAndCorrect(memoFit),
  // The best entry is a LocalBatch already (its goodput is not read): no copy per choice.
  chooseBatch: (model, num_nodes, num_replicas) =>
    bestInTable(tableFor(model, num_nodes, num_replicas), model.grad, model.limits.init_batch_size),
};
