/**
 * Memos of what is derived from a goodput model, keyed by what the model says (its parameters,
 * limits and correction) rather than by the model object (issue #49): jobs whose models are equal
 * (every job of a profile key before it has measured itself, a model not refitted since the last
 * round, a policy instance made anew when the open nodes change) share one table, so a round
 * computes a speedup curve once per distinct model, not once per job. Values are pure functions
 * of the key, so a memo never changes a decision. Pure (no I/O, no clock).
 */
import type { GoodputModel } from './types.js';

/**
 * A string naming every field of `model` a prediction reads: two models of the same key predict
 * the same goodput everywhere. Numbers print exactly (String keeps every digit of a double).
 */
export function modelKey(model: GoodputModel): string {
  const p = model.perf;
  const l = model.limits;
  const head =
    `${p.alpha_c},${p.beta_c},${p.alpha_n},${p.beta_n},${p.alpha_r},${p.beta_r},${p.gamma}|` +
    `${model.grad.sqr},${model.grad.var}|` +
    `${l.init_batch_size},${l.max_batch_size},${l.min_local_bsz},${l.max_local_bsz},${l.accumulation ? 1 : 0}`;
  const c = model.correction;
  if (!c) return head;
  const compute = c.compute.map((f) => `${f.local_bsz}:${f.factor}`).join(',');
  const shapes = c.shapes
    .map((s) => `${s.num_nodes}/${s.num_replicas}=` + s.by_batch.map((f) => `${f.local_bsz}:${f.factor}`).join(','))
    .join(';');
  return `${head}|${compute}|${shapes}`;
}

/**
 * Values of type T per (model content, `variant` string), kept across rounds. Bounded: when it
 * holds more than `min_size` entries and more than twice as many as the round just ended used,
 * the entries that round did not use are dropped (models refitted away), so a long-running
 * server does not grow without end.
 */
export class ModelMemo<T> {
  /** Per model object: its entries by variant (a model not refitted is keyed once). */
  private readonly byObject = new WeakMap<GoodputModel, Map<string, Entry<T>>>();
  /** Per model content (modelKey): its entries by variant, shared by equal models. */
  private readonly byContent = new Map<string, Map<string, Entry<T>>>();
  private round = 0;
  private usedThisRound = 0;

  constructor(private readonly min_size = 4096) {}

  /** The value for (`model`, `variant`), made by `make` the first time. */
  get(model: GoodputModel, variant: string, make: () => T): T {
    let variants = this.byObject.get(model);
    if (!variants) {
      const key = modelKey(model);
      variants = this.byContent.get(key);
      if (!variants) this.byContent.set(key, (variants = new Map()));
      this.byObject.set(model, variants);
    }
    let entry = variants.get(variant);
    if (!entry) {
      variants.set(variant, (entry = { value: make(), round: this.round }));
      this.usedThisRound++;
    } else if (entry.round !== this.round) {
      entry.round = this.round;
      this.usedThisRound++;
    }
    return entry.value;
  }

  /** Marks the end of a round: trims the models it did not use when the memo is large. */
  nextRound(): void {
    if (this.byContent.size > Math.max(this.min_size, 2 * this.usedThisRound)) {
      for (const [key, variants] of this.byContent) {
        for (const [variant, entry] of variants) if (entry.round < this.round) variants.delete(variant);
        // A model object still in use keeps its (now empty) map and refills it.
        if (variants.size === 0) this.byContent.delete(key);
      }
    }
    this.round++;
    this.usedThisRound = 0;
  }

  /** Models held (for tests). */
  get size(): number {
    return this.byContent.size;
  }
}

interface Entry<T> {
  value: T;
  /** The last round that used it. */
  round: number;
}
