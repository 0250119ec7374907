/**
 * The speedups of the goodput policy's job views (job-view.ts): per model content, a job's best
 * goodput at each size over its one-GPU goodput, kept across rounds (ModelMemo) and read by
 * replica count; and a view's speedup and size distance read from its own fields (issue #49:
 * no closure, context or memo per job). Pure.
 */
import type { PolicyJob } from '../../core/cluster.js';
import { REFERENCE_MODELS } from '../../goodput/memo-bank.js';
import type { ModelMemo } from '../../goodput/model-memo.js';
import type { GoodputModel } from '../../goodput/types.js';
import {
  bestGoodput,
  linearSpeedupFn,
  oneGpuSpeedup,
  type BatchPolicy,
  type SpeedupFn,
} from '../../goodput/speedup.js';
import { jobBatchPolicy } from '../job-batch.js';
import { approxBestGoodput } from './scale.js';
import { sizeDistanceFn, type SizeDistance } from './unmeasured.js';

/**
 * Speedup functions by model content and batch policy (goodput/model-memo.ts), kept across rounds
 * by the policy instance: jobs with equal models share one, and a model that was not refitted
 * keeps its; a speedup is a pure function of the model, so the memo never changes a decision.
 */
export type SpeedupCache = ModelMemo<ModelSpeedup>;

/** A model's speedup under one batch policy, and the distance of each size from what it measured. */
export interface ModelSpeedup {
  one_gpu: number;
  /** The speedup at (nodes, replicas), searched each time it is asked: speedupAt keeps it by size. */
  fn: SpeedupFn;
  distance: SizeDistance;
  /**
   * fn(ceil(r / by_gpus), r) by replica count r (NaN: not yet asked), for nodes of `by_gpus` GPUs:
   * an array read instead of a call of fn per size (tens of thousands a round, the first
   * of them before the JIT has compiled this code; issue #49). Filled lazily; the same values. A
   * plain array, not a Float64Array: one per model, and a typed array of this size gets a buffer
   * outside V8's heap (where every job has its own model, their making was a tenth of a first round).
   */
  by_replicas: number[];
  by_gpus: number;
  /**
   * The tables of node sizes other than by_gpus asked before (the shares layer's views change it
   * round to round): made only when a second node size is asked.
   */
  other_tables: Map<number, number[]> | undefined;
}

/** The model's speedup at `replicas` packed on nodes of `gpusPerNode` GPUs: fn through by_replicas. */
function speedupAt(m: ModelSpeedup, replicas: number, gpusPerNode: number): number {
  if (m.by_gpus !== gpusPerNode) useTableOf(m, gpusPerNode);
  let table = m.by_replicas;
  if (replicas >= table.length) {
    // From 8: most jobs of a large round are asked a few sizes (those waiting for GPUs).
    const grown = new Array<number>(Math.max(8, 2 * table.length, replicas + 1)).fill(NaN);
    for (let k = 0; k < table.length; k++) grown[k] = table[k]!;
    m.by_replicas = table = grown;
  }
  // undefined: not an index (a fractional count), asked of fn itself.
  const known: number | undefined = table[replicas];
  if (known === undefined) return m.fn(Math.ceil(replicas / gpusPerNode), replicas);
  if (known === known) return known; // not NaN: known
  return (table[replicas] = m.fn(Math.ceil(replicas / gpusPerNode), replicas));
}

/** Makes `gpus` the node size of m.by_replicas, keeping the table of the one before. */
function useTableOf(m: ModelSpeedup, gpus: number): void {
  if (m.by_gpus > 0) (m.other_tables ??= new Map()).set(m.by_gpus, m.by_replicas);
  m.by_replicas = m.other_tables?.get(gpus) ?? [];
  m.by_gpus = gpus;
}

export function modelSpeedup(
  model: GoodputModel,
  job: PolicyJob,
  cache: SpeedupCache | undefined,
  approx: boolean,
): ModelSpeedup {
  if (!cache) return makeModelSpeedup(model, jobBatchPolicy(job), approx, undefined);
  // The variant names jobBatchPolicy(job), made only on a miss. Most jobs have no batch rule:
  // their variant is a constant, not a string built per job.
  const fixed = job.fixed_batch_size;
  const cap = fixed === undefined ? job.batch_size_cap : undefined;
  const variant =
    fixed === undefined && cap === undefined
      ? approx
        ? '//~'
        : '/'
      : `${fixed ?? ''}/${cap ?? ''}${approx ? '/~' : ''}`;
  // Found without making a closure per job (a miss makes the value once per model).
  let value = cache.find(model, variant);
  if (value === undefined) {
    value = makeModelSpeedup(model, jobBatchPolicy(job), approx, cache.seed(model, variant));
    cache.put(model, variant, value);
  }
  return value;
}

/** What a memo bank saves of `m` (memo-bank.ts): one_gpu, by_gpus, then by_replicas. */
export function savedSpeedup(m: ModelSpeedup): readonly number[] {
  return [m.one_gpu, m.by_gpus, ...m.by_replicas];
}

/** The memo kind of the speedups in a memo bank. */
export const SPEEDUP_MEMO_KIND = 'goodput-speedup';

/** The speedups' fingerprint (memo-bank.ts): what this code computes for the reference models. */
export function speedupFingerprint(): number[] {
  const out: number[] = [];
  for (const model of REFERENCE_MODELS)
    for (const batch of [{}, { fixed_batch_size: 256 }, { max_batch_size: 1024 }])
      for (const approx of [false, true]) {
        const m = makeModelSpeedup(model, batch, approx, undefined);
        out.push(m.one_gpu, m.fn(1, 2), m.fn(1, 4), m.fn(2, 8), m.fn(4, 16), m.distance(2, 8));
      }
  return out;
}

function makeModelSpeedup(
  model: GoodputModel,
  batch: BatchPolicy,
  approx: boolean,
  seed: readonly number[] | undefined,
): ModelSpeedup {
  // A seed is savedSpeedup's numbers of an equal model: its one-GPU goodput and table, not searched again.
  const seeded = seed !== undefined && seed.length >= 2 && seed[1]! >= 0;
  // On a large cluster (scale.ts) the search over batch sizes is approximate.
  const best = approx ? approxBestGoodput : bestGoodput;
  const { one_gpu, fn } = oneGpuSpeedup(model, batch, best, seeded ? seed[0]! : undefined);
  return {
    one_gpu,
    fn: one_gpu > 0 ? fn : linearSpeedupFn(1),
    distance: sizeDistanceFn(model, batch),
    by_replicas: seeded ? tableFrom(seed) : [],
    by_gpus: seeded ? seed[1]! : 0,
    other_tables: undefined,
  };
}

/** A seed's table, made as speedupAt grows tables (one kind of array for V8: unknown is NaN). */
function tableFrom(seed: readonly number[]): number[] {
  const table = new Array<number>(Math.max(8, seed.length - 2)).fill(NaN);
  for (let k = 2; k < seed.length; k++) table[k - 2] = seed[k]!;
  return table;
}

/**
 * What a built view's speedup reads: own fields of the view (a copy of it keeps them), so that a
 * view needs no closure and context of its own (5,000 views a round; issue #49).
 */
export interface SpeedupFields {
  /** The job's model's speedups; undefined: linear. */
  speedup_model: ModelSpeedup | undefined;
  /** Largest replica count the job has run at (0: none). */
  speedup_measured: number;
  /** GoodputPolicyParams.unmeasured_gain_share. */
  speedup_share: number;
  /** GPUs per node (replicas are packed on as few nodes as possible). */
  speedup_gpus: number;
}

/**
 * RoundJob.speedup of a built view (called as its method): the model's speedup over one GPU, the
 * gain past the largest size run discounted by unmeasured_gain_share; linear without a model.
 */
export function viewSpeedup(this: SpeedupFields, replicas: number): number {
  if (replicas === 0) return 0;
  const modelled = this.speedup_model;
  if (!modelled) return replicas;
  const gpus = this.speedup_gpus;
  const measured = this.speedup_measured;
  let value = speedupAt(modelled, replicas, gpus);
  if (measured > 0 && replicas > measured) {
    const atMeasured = speedupAt(modelled, measured, gpus);
    if (value > atMeasured) value = atMeasured + this.speedup_share * (value - atMeasured);
  }
  return value;
}

/** RoundJob.distance of a job with a corrected model (a closure only for those jobs). */
export function viewDistance(modelled: ModelSpeedup, measured: number, gpusPerNode: number): (r: number) => number {
  // Past the largest size measured, unmeasured_gain_share already discounts the gain.
  return (r: number) => (r > measured ? 0 : modelled.distance(Math.ceil(r / gpusPerNode), r));
}
