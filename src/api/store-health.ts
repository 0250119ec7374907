/**
 * The store's health as /v1/health reports it. A store error that means the file is damaged
 * (SQLITE_CORRUPT*, SQLITE_NOTADB) seen by any request makes the store `damaged` for good; a
 * cheap probe read (at most once a second) catches a store that cannot serve at all.
 */
import { GoodputError } from '../core/errors.js';
import { isDiskFull } from '../datadir/disk-space.js';
import type { Store } from '../store/store.js';

/** What /v1/health says about the store. */
export interface StoreState {
  /** `full`: the data directory's disk has no room, so writes fail (or soon will). */
  state: 'ok' | 'damaged' | 'failing' | 'full';
  detail?: string;
}

const PROBE_EVERY_MS = 1000;

export class StoreHealth {
  private damaged: string | undefined;
  private probed: { at_ms: number; error: string | undefined; full?: boolean } = { at_ms: -Infinity, error: undefined };

  /**
   * `disk`: why the store's disk cannot take writes now (undefined while it can); checked with
   * the probe, so a full disk is reported before the first write fails.
   */
  constructor(
    private readonly store: Store,
    private readonly now_ms: () => number = Date.now,
    private readonly disk: () => string | undefined = () => undefined,
  ) {}

  /**
   * Notes an error a request met. Returns the error to answer with: a damaged store becomes
   * E_STORE_DAMAGED (503) instead of an internal error.
   */
  note(error: unknown): unknown {
    if (isDiskFull(error) && !(error instanceof GoodputError))
      return new GoodputError(
        'E_DISK_FULL',
        `the server's disk is full; nothing was changed: ${(error as Error).message}`,
      );
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== 'string' || !/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return error;
    this.damaged ??= `${code}: ${(error as Error).message}`;
    return new GoodputError(
      'E_STORE_DAMAGED',
      `the store is damaged (${this.damaged}); an admin must restore it from a backup (goodput restore)`,
    );
  }

  async state(): Promise<StoreState> {
    if (this.damaged) return { state: 'damaged', detail: this.damaged };
    const now = this.now_ms();
    if (now - this.probed.at_ms >= PROBE_EVERY_MS) {
      let error: string | undefined = this.disk();
      if (error !== undefined) {
        this.probed = { at_ms: now, error, full: true };
        return { state: 'full', detail: error };
      }
      try {
        await this.store.probe();
      } catch (e) {
        this.note(e);
        error = (e as Error).message;
      }
      this.probed = { at_ms: now, error };
    }
    if (this.damaged) return { state: 'damaged', detail: this.damaged };
    if (this.probed.error === undefined) return { state: 'ok' };
    return { state: this.probed.full === true ? 'full' : 'failing', detail: this.probed.error };
  }
}
