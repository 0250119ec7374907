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
 * The numbers of `model` a prediction reads, as one array: two models with equal arrays (bit for
 * bit) predict the same goodput everywhere. The correction's lengths are included, so that no
 * two layouts collide. Numbers, not a printed string: printing doubles in decimal was most of a
 * large cluster's first round (issue #49).
 */
export function modelNumbers(model: GoodputModel): Float64Array {
  const p = model.perf;
  const l = model.limits;
  const nums = [
    p.alpha_c,
    p.beta_c,
    p.alpha_n,
    p.beta_n,
    p.alpha_r,
    p.beta_r,
    p.gamma,
    model.grad.sqr,
    model.grad.var,
    l.init_batch_size,
    l.max_batch_size,
    l.min_local_bsz,
    l.max_local_bsz,
    l.accumulation ? 1 : 0,
  ];
  const c = model.correction;
  if (c) {
    nums.push(c.compute.length);
    for (const f of c.compute) nums.push(f.local_bsz, f.factor);
    nums.push(c.shapes.length);
    for (const s of c.shapes) {
      nums.push(s.num_nodes, s.num_replicas, s.by_batch.length);
      for (const f of s.by_batch) nums.push(f.local_bsz, f.factor);
    }
  }
  return Float64Array.from(nums);
}

/** Whether two models have the same content (modelNumbers equal bit for bit). */
export function sameModelContent(a: GoodputModel, b: GoodputModel): boolean {
  return sameWords(new Uint32Array(modelNumbers(a).buffer), new Uint32Array(modelNumbers(b).buffer));
}

function sameWords(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A 32-bit hash of the words (FNV-1a over words). */
function hashWords(words: Uint32Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < words.length; i++) h = Math.imul(h ^ words[i]!, 0x01000193);
  return h >>> 0;
}

/** The memo's entries for one model content. */
interface Content<T> {
  words: Uint32Array;
  variants: Map<string, Entry<T>>;
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
  /** Per hash of the model content (modelNumbers): the contents with that hash, shared by equal models. */
  private readonly byContent = new Map<number, Content<T>[]>();
  private contents = 0;
  private round = 0;
  private usedThisRound = 0;

  constructor(private readonly min_size = 4096) {}

  /** The value for (`model`, `variant`), made by `make` the first time. */
  get(model: GoodputModel, variant: string, make: () => T): T {
    let variants = this.byObject.get(model);
    if (!variants) {
      variants = this.contentOf(model);
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

  private contentOf(model: GoodputModel): Map<string, Entry<T>> {
    const words = new Uint32Array(modelNumbers(model).buffer);
    const hash = hashWords(words);
    let bucket = this.byContent.get(hash);
    if (!bucket) this.byContent.set(hash, (bucket = []));
    for (const c of bucket) if (sameWords(c.words, words)) return c.variants;
    const variants = new Map<string, Entry<T>>();
    bucket.push({ words, variants });
    this.contents++;
    return variants;
  }

  /** Marks the end of a round: trims the models it did not use when the memo is large. */
  nextRound(): void {
    if (this.contents > Math.max(this.min_size, 2 * this.usedThisRound)) {
      for (const [hash, bucket] of this.byContent) {
        const kept = bucket.filter(({ variants }) => {
          for (const [variant, entry] of variants) if (entry.round < this.round) variants.delete(variant);
          // A model object still in use keeps its (now empty) map and refills it.
          return variants.size > 0;
        });
        this.contents -= bucket.length - kept.length;
        if (kept.length === 0) this.byContent.delete(hash);
        else this.byContent.set(hash, kept);
      }
    }
    this.round++;
    this.usedThisRound = 0;
  }

  /** Models held (for tests). */
  get size(): number {
    return this.contents;
  }
}

interface Entry<T> {
  value: T;
  /** The last round that used it. */
  round: number;
}
