/**
 * The store's health as /v1/health reports it. A store error that means the file is damaged
 * (SQLITE_CORRUPT*, SQLITE_NOTADB) seen by any request makes the store `damaged` for good; a
 * cheap probe read (at most once a second) catches a store that cannot serve at all.
 */
import { GoodputError } from '../core/errors.js';
import type { Store } from '../store/store.js';

/** What /v1/health says about the store. */
export interface StoreState {
  state: 'ok' | 'damaged' | 'failing';
  detail?: string;
}

const PROBE_EVERY_MS = 1000;

export class StoreHealth {
  private damaged: string | undefined;
  private probed: { at_ms: number; error: string | undefined } = { at_ms: -Infinity, error: undefined };

  constructor(private readonly store: Store, private readonly now_ms: () => number = Date.now) {}

  /**
   * Notes an error a request met. Returns the error to answer with: a damaged store becomes
   * E_STORE_DAMAGED (503) instead of an internal error.
   */
  note(error: unknown): unknown {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== 'string' || !/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return error;
    this.damaged ??= `${code}: ${(error as Error).message}`;
    return new GoodputError('E_STORE_DAMAGED', `the store is damaged (${this.damaged}); an admin must restore it from a backup (goodput restore)`);
  }

  async state(): Promise<StoreState> {
    if (this.damaged) return { state: 'damaged', detail: this.damaged };
    const now = this.now_ms();
    if (now - this.probed.at_ms >= PROBE_EVERY_MS) {
      let error: string | undefined;
      try {
        await this.store.probe();
      } catch (e) {
        this.note(e);
        error = (e as Error).message;
      }
      this.probed = { at_ms: now, error };
    }
    if (this.damaged) return { state: 'damaged', detail: this.damaged };
    return this.probed.error === undefined ? { state: 'ok' } : { state: 'failing', detail: this.probed.error };
  }
}
