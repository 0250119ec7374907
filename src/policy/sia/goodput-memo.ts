/**
 * The typed policies' goodputs per model content (goodput/model-memo.ts), kept across rounds and,
 * through a memo bank (goodput/memo-bank.ts), across a restart: a model's table of best goodputs
 * by (batch, nodes, GPUs), how a bank saves and seeds it, and its fingerprint. Pure.
 */
import { REFERENCE_MODELS } from '../../goodput/memo-bank.js';
import type { ModelMemo } from '../../goodput/model-memo.js';
import { fixedBatchChoice, optimizeBatch } from '../../goodput/optimize.js';
import type { GoodputModel } from '../../goodput/types.js';
import { approxBestGoodput } from '../goodput/scale.js';

/** Goodputs by model content (goodput/model-memo.ts), then by (batch, nodes, GPUs) and search. */
export type GoodputMemo = ModelMemo<Map<number, number>>;

/** The memo kind of a GoodputMemo's tables in a memo bank (goodput/memo-bank.ts). */
export const GOODPUTS_MEMO_KIND = 'typed-goodputs';

/** What a memo bank saves of a GoodputMemo table: its (key, goodput) pairs in a row. */
export function savedGoodputs(table: Map<number, number>): readonly number[] {
  const out: number[] = [];
  table.forEach((g, key) => out.push(key, g));
  return out;
}

/** The GoodputMemo tables' fingerprint (memo-bank.ts): goodputOn's values for the reference models. */
export function goodputsFingerprint(): number[] {
  const out: number[] = [];
  const shapes = [1, 1, 1, 4, 2, 8];
  for (const model of REFERENCE_MODELS)
    for (const fixed_batch_size of [undefined, 256])
      for (const approx of [false, true])
        for (let k = 0; k < shapes.length; k += 2)
          out.push(goodputOn(new Map(), approx, model, fixed_batch_size, shapes[k]!, shapes[k + 1]!));
  return out;
}

/** A GoodputMemo table from savedGoodputs' numbers (empty without them). */
export function goodputTable(seed: readonly number[] | undefined): Map<number, number> {
  const table = new Map<number, number>();
  if (seed) for (let k = 0; k + 1 < seed.length; k += 2) table.set(seed[k]!, seed[k + 1]!);
  return table;
}

/**
 * Best goodput on (nodes, gpus) of the model whose table (`byShape`, from the memo) this is; on a
 * large cluster (`approx`) by the approximate batch search of goodput/scale.ts.
 */
export function goodputOn(
  byShape: Map<number, number>,
  approx: boolean,
  model: GoodputModel,
  fixed_batch_size: number | undefined,
  nodes: number,
  gpus: number,
): number {
  const key = ((fixed_batch_size ?? 0) * 4096 + nodes) * 4096 + gpus;
  let g = byShape.get(key);
  if (g === undefined) {
    if (fixed_batch_size !== undefined) g = fixedBatchChoice(model, nodes, gpus, fixed_batch_size).goodput;
    else if (approx) g = approxBestGoodput(model, nodes, gpus, { max_batch_size: model.limits.max_batch_size });
    else g = optimizeBatch(model, nodes, gpus, model.limits.max_batch_size).goodput;
    byShape.set(key, g);
  }
  return g;
}
