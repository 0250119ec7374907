/**
 * The policies' memos of pure values per model content (model-memo.ts), saved as plain data and
 * given back after a restart (issue #49: "memos survive a restart"): a speedup table or a row of
 * goodputs is a pure function of a model's content, so a server that saved them can start its
 * first round with the tables of every model it knew instead of searching them again. A saved
 * entry is a seed: the memo that misses a model looks for its seed (by modelKey and variant)
 * before computing, and uses it once. Seeds never change a decision: each kind of memo has a
 * fingerprint (its values for fixed reference models), saved with its entries and computed again
 * before the first seed of the kind is given; seeds saved by code that computes other values (an
 * upgrade that changed the goodput model or a search) are dropped. Pure (no I/O).
 */
import { modelKey, type MemoKeeper, type SavedEntries } from './model-memo.js';
import type { GoodputModel } from './types.js';

/** The layout of a saved memo; a snapshot of another format is not restored. */
export const MEMO_FORMAT = 1;

const REFERENCE_LIMITS = {
  init_batch_size: 128,
  max_batch_size: 4096,
  min_local_bsz: 32,
  max_local_bsz: 512,
  accumulation: true,
};
// The numbers of testing/perf-fixture.ts CIFAR_PERF, written here: a fingerprint must not move
// when a test fixture is retuned (every saved memo would be dropped), nor production import testing/.
const REFERENCE_PERF = {
  alpha_c: 0.0032,
  beta_c: 0.00078,
  alpha_n: 0.0265,
  beta_n: 0.0028,
  alpha_r: 0.0114,
  beta_r: 0.0004,
  gamma: 1.16,
};

/**
 * Fixed models a memo kind's fingerprint is computed on (MemoKeeper.add): one as fitted, one with
 * a measured correction, so that a change to the step-time model, the corrections, the
 * statistical efficiency or a batch search changes the fingerprint.
 */
export const REFERENCE_MODELS: readonly GoodputModel[] = [
  { perf: REFERENCE_PERF, grad: { sqr: 0.05, var: 2 }, limits: REFERENCE_LIMITS },
  {
    perf: REFERENCE_PERF,
    grad: { sqr: 0.3, var: 0.5 },
    limits: REFERENCE_LIMITS,
    correction: {
      compute: [{ local_bsz: 64, factor: 1.2 }],
      shapes: [{ num_nodes: 2, num_replicas: 8, by_batch: [{ local_bsz: 64, factor: 0.8 }] }],
    },
  },
];

/**
 * Saved memos, as JSON writes them: per kind (what a memo holds, e.g. `goodput-speedup`), its
 * entries as [modelKey, variant, numbers] and the fingerprint of the code that made them; a
 * number that is not finite (a table's unknown entry) is null.
 */
export interface MemoSnapshot {
  format: typeof MEMO_FORMAT;
  kinds: Record<string, [string, string, (number | null)[]][]>;
  fingerprints: Record<string, (number | null)[]>;
}

/** Memos to save and seeds to give them, shared by every policy instance of one server or run. */
export class MemoBank implements MemoKeeper {
  private readonly sources: { kind: string; entries: SavedEntries }[] = [];
  /** Per kind, the fingerprint function its memos were added with, and its value once computed. */
  private readonly prints = new Map<string, { fingerprint: () => readonly number[]; value?: number[] }>();
  /** Seeds by kind, then by modelKey + '\n' + variant; with the fingerprint they were saved with. */
  private readonly seeds = new Map<string, Map<string, number[]>>();
  private readonly savedPrints = new Map<string, number[]>();
  /** Kinds whose seeds were checked against this code's fingerprint (the stale ones dropped). */
  private readonly checked = new Set<string>();
  /** Kinds a memo asked seeds of: their seeds still unused at a save are of models no longer asked. */
  private readonly asked = new Set<string>();
  private seedsLeft = 0;

  /**
   * Adds a memo whose entries `entries` lists under `kind` (a memo of each policy instance);
   * `fingerprint` gives the kind's values for fixed reference models (the same for every memo
   * of the kind: the first one added is kept).
   */
  add(kind: string, entries: SavedEntries, fingerprint: () => readonly number[]): void {
    this.sources.push({ kind, entries });
    if (!this.prints.has(kind)) this.prints.set(kind, { fingerprint });
  }

  /** Seeds not used yet. */
  get seeds_left(): number {
    return this.seedsLeft;
  }

  /**
   * The saved numbers of (`model`, `variant`) under `kind`, once: a seed taken is gone (the memo
   * keeps what it makes of it). Undefined where none was restored; cheap while no seed is left.
   */
  take(kind: string, model: GoodputModel, variant: string): number[] | undefined {
    if (this.seedsLeft === 0) return undefined;
    const ofKind = this.freshSeeds(kind);
    if (!ofKind) return undefined;
    this.asked.add(kind);
    const id = `${modelKey(model)}\n${variant}`;
    const seed = ofKind.get(id);
    if (seed !== undefined) {
      ofKind.delete(id);
      this.seedsLeft--;
    }
    return seed;
  }

  /**
   * Every added memo's entries (one per kind, model and variant), with the seeds not used yet of
   * kinds no memo has asked for (a restart before any round keeps them). The seeds left of a kind
   * that was asked for are dropped here: their models were not asked in the rounds since the
   * restart (finished jobs, refitted models), so restarts do not carry them on without end.
   */
  save(): MemoSnapshot {
    for (const kind of this.asked) {
      this.seedsLeft -= this.seeds.get(kind)?.size ?? 0;
      this.seeds.delete(kind);
    }
    const byKind = new Map<string, Map<string, [string, string, (number | null)[]]>>();
    const ofKind = (kind: string) => {
      let m = byKind.get(kind);
      if (!m) byKind.set(kind, (m = new Map()));
      return m;
    };
    const fingerprints: MemoSnapshot['fingerprints'] = {};
    for (const kind of [...this.seeds.keys()]) {
      const seeds = this.freshSeeds(kind);
      if (!seeds) continue;
      fingerprints[kind] = (this.printOf(kind) ?? this.savedPrints.get(kind)!).map(finiteOrNull);
      for (const [id, numbers] of seeds) {
        const cut = id.lastIndexOf('\n');
        ofKind(kind).set(id, [id.slice(0, cut), id.slice(cut + 1), numbers.map(finiteOrNull)]);
      }
    }
    for (const { kind, entries } of this.sources) {
      fingerprints[kind] = this.printOf(kind)!.map(finiteOrNull);
      for (const [key, variant, numbers] of entries())
        ofKind(kind).set(`${key}\n${variant}`, [key, variant, numbers.map(finiteOrNull)]);
    }
    const kinds: MemoSnapshot['kinds'] = {};
    for (const [kind, m] of byKind) kinds[kind] = [...m.values()];
    return { format: MEMO_FORMAT, kinds, fingerprints };
  }

  /**
   * Takes the entries of `snapshot` as seeds (replacing any not used). A snapshot of another format
   * or shape gives none: a memo is a cache, and one that cannot be read is computed again.
   * Returns how many seeds it holds (before any is checked against this code's fingerprint).
   */
  restore(snapshot: unknown): number {
    this.seeds.clear();
    this.savedPrints.clear();
    this.checked.clear();
    this.asked.clear();
    this.seedsLeft = 0;
    if (!isSnapshot(snapshot)) return 0;
    for (const [kind, entries] of Object.entries(snapshot.kinds)) {
      const print = snapshot.fingerprints[kind];
      if (print === undefined) continue;
      const ofKind = new Map<string, number[]>();
      for (const [key, variant, numbers] of entries)
        ofKind.set(
          `${key}\n${variant}`,
          numbers.map((x) => x ?? NaN),
        );
      this.seeds.set(kind, ofKind);
      this.savedPrints.set(
        kind,
        print.map((x) => x ?? NaN),
      );
      this.seedsLeft += ofKind.size;
    }
    return this.seedsLeft;
  }

  /**
   * The seeds of `kind`, once checked: where a memo of the kind was added, its fingerprint must
   * equal the saved one, else the kind's seeds are dropped (made by other code). Unchecked while
   * no memo of the kind was added (kept to be saved again as they came).
   */
  private freshSeeds(kind: string): Map<string, number[]> | undefined {
    const seeds = this.seeds.get(kind);
    if (!seeds || this.checked.has(kind)) return seeds;
    const now = this.printOf(kind);
    if (now === undefined) return seeds;
    this.checked.add(kind);
    if (sameNumbers(now, this.savedPrints.get(kind)!)) return seeds;
    this.seedsLeft -= seeds.size;
    this.seeds.delete(kind);
    return undefined;
  }

  private printOf(kind: string): number[] | undefined {
    const p = this.prints.get(kind);
    if (!p) return undefined;
    return (p.value ??= [...p.fingerprint()]);
  }
}

/** Equal lengths and numbers (NaN equal to NaN, as saved: null). */
function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i] || (x !== x && b[i] !== b[i]));
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

function isSnapshot(s: unknown): s is MemoSnapshot {
  if (typeof s !== 'object' || s === null) return false;
  const { format, kinds, fingerprints } = s as Partial<MemoSnapshot>;
  if (format !== MEMO_FORMAT || typeof kinds !== 'object' || kinds === null) return false;
  if (typeof fingerprints !== 'object' || fingerprints === null) return false;
  const numbers = (xs: unknown) => Array.isArray(xs) && xs.every((x) => x === null || typeof x === 'number');
  if (!Object.values(fingerprints).every(numbers)) return false;
  return Object.values(kinds).every(
    (entries) =>
      Array.isArray(entries) &&
      entries.every(
        (e) =>
          Array.isArray(e) &&
          e.length === 3 &&
          typeof e[0] === 'string' &&
          typeof e[1] === 'string' &&
          !e[1].includes('\n') &&
          numbers(e[2]),
      ),
  );
}

/** JSON.parse of `text`, or undefined where it is not JSON (restore then takes nothing). */
export function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A bank seeded from `json` (memoJson's text, saved before); without seeds where it is undefined or unreadable. */
export function restoredBank(json: string | undefined): MemoBank {
  const bank = new MemoBank();
  if (json !== undefined) bank.restore(parsedOrUndefined(json));
  return bank;
}

/** `bank`'s memos as JSON text, or undefined where it holds none (nothing worth saving). */
export function memoJson(bank: MemoBank): string | undefined {
  const snapshot = bank.save();
  return Object.values(snapshot.kinds).some((entries) => entries.length > 0) ? JSON.stringify(snapshot) : undefined;
}
