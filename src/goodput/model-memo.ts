/**
 * Memos of what is derived from a goodput model, keyed by what the model says (its parameters,
 * limits and correction) rather than by the model object (issue #49): jobs whose models are equal
 * (every job of a profile key before it has measured itself, a model not refitted since the last
 * round, a policy instance made anew when the open nodes change) share one table, so a round
 * computes a speedup curve once per distinct model, not once per job. Values are pure functions
 * of the key, so a memo never changes a decision. Pure (no I/O, no clock).
 */
import type { GoodputModel, StepCorrection } from './types.js';

/** A memo's saved entries, as (modelKey, variant, numbers): what a MemoKeeper saves. */
export type SavedEntries = () => Iterable<[string, string, readonly number[]]>;

/** Where memos are saved and seeded from (memo-bank.ts MemoBank). */
export interface MemoKeeper {
  /** Adds a memo whose entries `entries` lists under `kind`; `fingerprint`: the kind's values for fixed models. */
  add(kind: string, entries: SavedEntries, fingerprint: () => readonly number[]): void;
  /** The saved numbers of (`model`, `variant`) under `kind`, once; undefined where none. */
  take(kind: string, model: GoodputModel, variant: string): number[] | undefined;
}

/**
 * A string naming every field of `model` a prediction reads: two models of the same key predict
 * the same goodput everywhere. Numbers print exactly (String keeps every digit of a double).
 */
export function modelKey(model: GoodputModel): string {
  const head = new Float64Array(HEAD_FIELDS);
  readHead(model, head);
  return contentKey(head, 0, correctionKey(model));
}

/** Numbers of a model a prediction reads, besides its correction (modelKey's head, in order). */
const HEAD_FIELDS = 14;

/**
 * A number naming `model`'s head (the numbers modelKey prints first) coarsely: its compute
 * parameter alpha_c plus its gradient noise sqr, the key of a Map (which hashes it natively).
 * Not a string: printing 14 doubles per job was a tenth of the first round at 5,000 jobs (issue
 * #49); and two numbers, not all 14: the first round runs this before the JIT has compiled it,
 * where every number read is boxed. Equal heads give equal keys (-0 and 0 alike, as Map keys and
 * String treat them); unequal heads may too (models of one application fitted at different
 * epochs share alpha_c), so sameHead decides.
 */
function headKey(model: GoodputModel): number {
  return model.perf.alpha_c + model.grad.sqr;
}

/** Writes `model`'s head into `head`, in modelKey's order (accumulation as 1 or 0). */
function readHead(model: GoodputModel, head: Float64Array): void {
  const p = model.perf;
  const l = model.limits;
  head[0] = p.alpha_c;
  head[1] = p.beta_c;
  head[2] = p.alpha_n;
  head[3] = p.beta_n;
  head[4] = p.alpha_r;
  head[5] = p.beta_r;
  head[6] = p.gamma;
  head[7] = model.grad.sqr;
  head[8] = model.grad.var;
  head[9] = l.init_batch_size;
  head[10] = l.max_batch_size;
  head[11] = l.min_local_bsz;
  head[12] = l.max_local_bsz;
  head[13] = l.accumulation ? 1 : 0;
}

/**
 * The modelKey of a content: its head at `at` of `heads`, printed, then its correction key ('':
 * none). The one printer of both modelKey and the keys a memo saves (`ModelMemo.saved`).
 */
function contentKey(heads: Float64Array, at: number, correction: string): string {
  const h = (k: number): number => heads[at + k]!;
  const head =
    `${h(0)},${h(1)},${h(2)},${h(3)},${h(4)},${h(5)},${h(6)}|${h(7)},${h(8)}|` +
    `${h(9)},${h(10)},${h(11)},${h(12)},${h(13)}`;
  return correction === '' ? head : `${head}|${correction}`;
}

/** The head being looked up (one buffer, not an array per lookup: thousands of jobs a round). */
const lookedUp = new Float64Array(HEAD_FIELDS);

/**
 * Whether the head `lookedUp` holds equals the one at `at` in `heads` as modelKey would say: equal
 * numbers, -0 as 0, NaN as NaN.
 */
function sameHead(heads: Float64Array, at: number): boolean {
  for (let k = 0; k < HEAD_FIELDS; k++) {
    const a = heads[at + k]!;
    const b = lookedUp[k]!;
    if (a !== b && (a === a || b === b)) return false;
  }
  return true;
}

/**
 * The part of modelKey past its head: the correction's factors ('' without one). Kept per
 * correction object (corrections are data, never changed once made): a driver that keeps a job's
 * fit between refits (the simulator) passes the same correction every round, with a new model
 * object around it, and printing its factors was a fifth of the policy's per-job work in a
 * simulated day at 16,384 GPUs (issue #49).
 */
function correctionKey(model: GoodputModel): string {
  const c = model.correction;
  if (!c) return '';
  let key = correctionKeys.get(c);
  if (key === undefined) {
    const compute = c.compute.map((f) => `${f.local_bsz}:${f.factor}`).join(',');
    const shapes = c.shapes
      .map((s) => `${s.num_nodes}/${s.num_replicas}=` + s.by_batch.map((f) => `${f.local_bsz}:${f.factor}`).join(','))
      .join(';');
    correctionKeys.set(c, (key = `${compute}|${shapes}`));
  }
  return key;
}

const correctionKeys = new WeakMap<StepCorrection, string>();

/** The entries of one model content: equal heads and correction keys are one modelKey. */
interface Content<T> {
  /** Where its head starts in its memo's `heads`. */
  head_at: number;
  correction: string;
  variants: Map<string, Entry<T>>;
}

/**
 * Values of type T per (model content, `variant` string), kept across rounds. Bounded: when it
 * holds more than `min_size` entries and more than twice as many as the round just ended used,
 * the entries that round did not use are dropped (models refitted away), so a long-running
 * server does not grow without end. Contents are told apart as modelKey would, by a sum of the
 * numbers (headKey) and then the numbers themselves (no string per model).
 */
export class ModelMemo<T> {
  /** Per corrected model object: its entries by variant (its correction's key is made once). */
  private readonly byObject = new WeakMap<GoodputModel, Map<string, Entry<T>>>();
  /** Per headKey: the contents of that key, shared by equal models. */
  private readonly byContent = new Map<number, Content<T>[]>();
  /**
   * The contents' heads, HEAD_FIELDS numbers each, in one buffer (compacted when contents are
   * dropped): not an array per content, which with a model per job was a fifth of a first round's
   * garbage (and 14 doubles are past V8's in-heap size for a typed array of their own; issue #49).
   */
  private heads = new Float64Array(HEAD_FIELDS * 256);
  private headsUsed = 0;
  private contents = 0;
  private round = 0;
  private usedThisRound = 0;
  /** The model `find` looked up last and its entries: `put` right after a miss reuses them. */
  private lastModel: GoodputModel | undefined;
  private lastVariants: Map<string, Entry<T>> | undefined;

  /** The bank this memo is saved to and seeded from (memo-bank.ts), and what it saves there as. */
  private bank: MemoKeeper | undefined;
  private kind = '';

  constructor(private readonly min_size = 4096) {}

  /**
   * Saves this memo's entries to `bank` under `kind`, `save` giving each value's numbers (undefined:
   * not saved), and makes `seed` read the bank's seeds of that kind. `fingerprint`: the numbers
   * the code behind the memo's values gives for fixed models (seeds saved by code that gives other
   * numbers are not used: memo-bank.ts).
   */
  keepIn(
    bank: MemoKeeper,
    kind: string,
    save: (value: T) => readonly number[] | undefined,
    fingerprint: () => readonly number[],
  ): void {
    this.bank = bank;
    this.kind = kind;
    bank.add(kind, () => this.saved(save), fingerprint);
  }

  /** The saved numbers of (`model`, `variant`) from the bank (once), for a value not in the memo. */
  seed(model: GoodputModel, variant: string): number[] | undefined {
    return this.bank?.take(this.kind, model, variant);
  }

  private *saved(save: (value: T) => readonly number[] | undefined): Iterable<[string, string, readonly number[]]> {
    for (const bucket of this.byContent.values())
      for (const c of bucket) {
        const key = contentKey(this.heads, c.head_at, c.correction);
        for (const [variant, entry] of c.variants) {
          const numbers = save(entry.value);
          if (numbers !== undefined) yield [key, variant, numbers];
        }
      }
  }

  /**
   * The value for (`model`, `variant`), made by `make` the first time, from the bank's seed of it
   * where there is one (`seed`; undefined: none).
   */
  get(model: GoodputModel, variant: string, make: (seed: number[] | undefined) => T): T {
    let value = this.find(model, variant);
    if (value === undefined) this.put(model, variant, (value = make(this.seed(model, variant))));
    return value;
  }

  /**
   * The value for (`model`, `variant`), or undefined when none was put (`get` without a closure,
   * for callers that look up thousands of jobs a round). T must not include undefined.
   */
  find(model: GoodputModel, variant: string): T | undefined {
    const variants = this.variantsOf(model);
    this.lastModel = model;
    this.lastVariants = variants;
    const entry = variants.get(variant);
    if (!entry) return undefined;
    if (entry.round !== this.round) {
      entry.round = this.round;
      this.usedThisRound++;
    }
    return entry.value;
  }

  /** Sets the value for (`model`, `variant`) (after `find` found none). */
  put(model: GoodputModel, variant: string, value: T): void {
    // After a miss of `find` for this model: its entries without a second lookup of its content.
    const variants = model === this.lastModel ? this.lastVariants! : this.variantsOf(model);
    variants.set(variant, { value, round: this.round });
    this.usedThisRound++;
  }

  private variantsOf(model: GoodputModel): Map<string, Entry<T>> {
    // Without a correction the content is found from a key of two numbers and a comparison of 14,
    // about what the weak map costs, and a weak map entry per model object is garbage the collector
    // must trace specially (5,000 new model objects a round when a store deserializes them).
    if (!model.correction) return this.content(model).variants;
    let variants = this.byObject.get(model);
    if (!variants) {
      variants = this.content(model).variants;
      this.byObject.set(model, variants);
    }
    return variants;
  }

  private content(model: GoodputModel): Content<T> {
    const key = headKey(model);
    const correction = model.correction ? correctionKey(model) : '';
    let bucket = this.byContent.get(key);
    if (!bucket) this.byContent.set(key, (bucket = []));
    readHead(model, lookedUp);
    for (let k = 0; k < bucket.length; k++) {
      const c = bucket[k]!;
      if (c.correction === correction && sameHead(this.heads, c.head_at)) return c;
    }
    if (this.headsUsed + HEAD_FIELDS > this.heads.length) {
      const grown = new Float64Array(2 * this.heads.length);
      grown.set(this.heads);
      this.heads = grown;
    }
    this.heads.set(lookedUp, this.headsUsed);
    const c: Content<T> = { head_at: this.headsUsed, correction, variants: new Map() };
    this.headsUsed += HEAD_FIELDS;
    bucket.push(c);
    this.contents++;
    return c;
  }

  /** Marks the end of a round: trims the models it did not use when the memo is large. */
  nextRound(): void {
    if (this.contents > Math.max(this.min_size, 2 * this.usedThisRound)) {
      for (const [hash, bucket] of this.byContent) {
        for (let k = bucket.length - 1; k >= 0; k--) {
          const variants = bucket[k]!.variants;
          for (const [variant, entry] of variants) if (entry.round < this.round) variants.delete(variant);
          // A model object still in use keeps its (now empty) map and refills it.
          if (variants.size === 0) {
            bucket.splice(k, 1);
            this.contents--;
          }
        }
        if (bucket.length === 0) this.byContent.delete(hash);
      }
      this.compactHeads();
    }
    this.round++;
    this.usedThisRound = 0;
    this.lastModel = undefined;
    this.lastVariants = undefined;
  }

  /** Moves the heads of the contents still held to the front of a buffer sized for them. */
  private compactHeads(): void {
    const heads = new Float64Array(Math.max(HEAD_FIELDS * 256, 2 * HEAD_FIELDS * this.contents));
    let used = 0;
    for (const bucket of this.byContent.values())
      for (const c of bucket) {
        heads.set(this.heads.subarray(c.head_at, c.head_at + HEAD_FIELDS), used);
        c.head_at = used;
        used += HEAD_FIELDS;
      }
    this.heads = heads;
    this.headsUsed = used;
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
