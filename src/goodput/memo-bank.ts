/**
 * The policies' memos of pure values per model content (model-memo.ts), saved as plain data and
 * given back after a restart (issue #49: "memos survive a restart"): a speedup table or a row of
 * goodputs is a pure function of a model's content, so a server that saved them can start its
 * first round with the tables of every model it knew instead of searching them again. A saved
 * entry is a seed: the memo that misses a model looks for its seed (by modelKey and variant)
 * before computing, and uses it once. Seeds never change a decision, provided they were saved by
 * the same code (MEMO_FORMAT and the policy's kinds name what they hold). Pure (no I/O).
 */
import { modelKey, type MemoKeeper, type SavedEntries } from './model-memo.js';
import type { GoodputModel } from './types.js';

/** The layout of a saved memo; a snapshot of another format is not restored. */
export const MEMO_FORMAT = 1;

/**
 * Saved memos, as JSON writes them: per kind (what a memo holds, e.g. `goodput-speedup`), its
 * entries as [modelKey, variant, numbers]; a number that is not finite (a table's unknown entry)
 * is null.
 */
export interface MemoSnapshot {
  format: typeof MEMO_FORMAT;
  kinds: Record<string, [string, string, (number | null)[]][]>;
}

/** Memos to save and seeds to give them, shared by every policy instance of one server or run. */
export class MemoBank implements MemoKeeper {
  private readonly sources: { kind: string; entries: SavedEntries }[] = [];
  /** Seeds by kind, then by modelKey + '\n' + variant. */
  private readonly seeds = new Map<string, Map<string, number[]>>();
  private seedsLeft = 0;

  /** Adds a memo whose entries `save` lists under `kind` (a memo of each policy instance). */
  add(kind: string, entries: SavedEntries): void {
    this.sources.push({ kind, entries });
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
    const ofKind = this.seeds.get(kind);
    if (!ofKind) return undefined;
    const id = `${modelKey(model)}\n${variant}`;
    const seed = ofKind.get(id);
    if (seed !== undefined) {
      ofKind.delete(id);
      this.seedsLeft--;
    }
    return seed;
  }

  /** Every added memo's entries (one per kind, model and variant), with the seeds not used yet. */
  save(): MemoSnapshot {
    const byKind = new Map<string, Map<string, [string, string, (number | null)[]]>>();
    const ofKind = (kind: string) => {
      let m = byKind.get(kind);
      if (!m) byKind.set(kind, (m = new Map()));
      return m;
    };
    for (const [kind, seeds] of this.seeds)
      for (const [id, numbers] of seeds) {
        const cut = id.lastIndexOf('\n');
        ofKind(kind).set(id, [id.slice(0, cut), id.slice(cut + 1), numbers.map(finiteOrNull)]);
      }
    for (const { kind, entries } of this.sources)
      for (const [key, variant, numbers] of entries())
        ofKind(kind).set(`${key}\n${variant}`, [key, variant, numbers.map(finiteOrNull)]);
    const kinds: MemoSnapshot['kinds'] = {};
    for (const [kind, m] of byKind) kinds[kind] = [...m.values()];
    return { format: MEMO_FORMAT, kinds };
  }

  /**
   * Takes the entries of `snapshot` as seeds (replacing any not used). A snapshot of another format
   * or shape gives none: a memo is a cache, and one that cannot be read is computed again.
   * Returns how many seeds it holds.
   */
  restore(snapshot: unknown): number {
    this.seeds.clear();
    this.seedsLeft = 0;
    if (!isSnapshot(snapshot)) return 0;
    for (const [kind, entries] of Object.entries(snapshot.kinds)) {
      const ofKind = new Map<string, number[]>();
      for (const [key, variant, numbers] of entries)
        ofKind.set(
          `${key}\n${variant}`,
          numbers.map((x) => x ?? NaN),
        );
      this.seeds.set(kind, ofKind);
      this.seedsLeft += ofKind.size;
    }
    return this.seedsLeft;
  }
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

function isSnapshot(s: unknown): s is MemoSnapshot {
  if (typeof s !== 'object' || s === null) return false;
  const { format, kinds } = s as Partial<MemoSnapshot>;
  if (format !== MEMO_FORMAT || typeof kinds !== 'object' || kinds === null) return false;
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
          Array.isArray(e[2]) &&
          e[2].every((x) => x === null || typeof x === 'number'),
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

/** `bank`'s memos as JSON text, or undefined where it holds none (nothing worth saving). */
export function memoJson(bank: MemoBank): string | undefined {
  const snapshot = bank.save();
  return Object.values(snapshot.kinds).some((entries) => entries.length > 0) ? JSON.stringify(snapshot) : undefined;
}
