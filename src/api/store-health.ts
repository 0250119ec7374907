/**
 * The store's health as /v1/health reports it. A store error that means the file is damaged
 * (SQLITE_CORRUPT*, SQLITE_NOTADB) seen by any request makes the store `damaged` for good; a
 * cheap probe read (at most once a second) catches a store that cannot serve at all. A store that
 * can be read but not written (an immutable or read-only file, a read-only mount, a failing
 * disk) is `failing`: seen by a request's write error at once, and by a probe write (a committed
 * write that changes nothing) every 10 s otherwise; while it is failing the probe write runs with
 * each probe, so health turns `ok` within a second of the store taking writes again.
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
const WRITE_PROBE_EVERY_MS = 10_000;

/** SQLite's codes of a write the file or its disk refused (SQLITE_FULL is a full disk: E_DISK_FULL). */
const UNWRITABLE = /^SQLITE_(IOERR|READONLY|CANTOPEN|PERM)/;

/** What an admin checks when the store cannot be written. */
const CHECK =
  "check the data directory's database files (goodput.sqlite, -wal, -shm): owner and " +
  'permissions, the immutable attribute (lsattr; chattr -i), a read-only mount, disk errors ' +
  '(dmesg)';

/** The error a request gets when the store refused its write: 503, retry once an admin fixed it. */
function unavailable(detail: string): GoodputError {
  return new GoodputError(
    'E_STORE_UNAVAILABLE',
    `the store cannot be written (${detail}); the change was not made. An admin should ${CHECK}`,
  );
}

export class StoreHealth {
  private damaged: string | undefined;
  /** Why the store refused the last write (a request's or the probe's); undefined once a write succeeded. */
  private unwritable: string | undefined;
  private probed: { at_ms: number; error: string | undefined; full?: boolean } = { at_ms: -Infinity, error: undefined };
  private writeProbedAt = -Infinity;

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
   * E_STORE_DAMAGED (503), a write the store refused E_STORE_UNAVAILABLE (503), a full disk
   * E_DISK_FULL (507), instead of an internal error.
   */
  note(error: unknown): unknown {
    if (isDiskFull(error) && !(error instanceof GoodputError))
      return new GoodputError(
        'E_DISK_FULL',
        `the server's disk is full; nothing was changed: ${(error as Error).message}`,
      );
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== 'string') return error;
    if (UNWRITABLE.test(code)) {
      this.unwritable = `${code}: ${(error as Error).message}`;
      // The next health check probes at once instead of answering from an older probe.
      this.probed = { ...this.probed, at_ms: -Infinity };
      return unavailable(this.unwritable);
    }
    if (!/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return error;
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
      const write = this.unwritable !== undefined || now - this.writeProbedAt >= WRITE_PROBE_EVERY_MS;
      try {
        await this.store.probe(write);
        if (write) this.unwritable = undefined;
      } catch (e) {
        this.note(e);
        error = (e as Error).message;
      }
      if (write) this.writeProbedAt = now;
      this.probed = { at_ms: now, error };
    }
    if (this.damaged) return { state: 'damaged', detail: this.damaged };
    if (this.unwritable !== undefined)
      return { state: 'failing', detail: `the store cannot be written (${this.unwritable}): ${CHECK}` };
    if (this.probed.error === undefined) return { state: 'ok' };
    return { state: this.probed.full === true ? 'full' : 'failing', detail: this.probed.error };
  }
}
