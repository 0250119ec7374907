/**
 * The policy's memos kept across a server restart (issue #49; goodput/memo-bank.ts): read from
 * the store at start, saved there every MEMO_SAVE_EVERY_MS and when the server stops. Gzipped
 * JSON: at 16,384 GPUs where every job has its own model they are about 20 MB of JSON. A memo is
 * a cache: one that cannot be read or saved is said in the log and computed again, never an error.
 */
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { MIN_FREE_BYTES, mibText } from '../datadir/disk-space.js';
import type { Store } from '../store/store.js';

/** How often a running server saves the policy's memos (a kill -9 loses at most this much of them). */
export const MEMO_SAVE_EVERY_MS = 10 * 60_000;

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** The memos saved before as JSON text, or undefined (none saved, or unreadable: logged). */
export async function loadPolicyMemo(store: Store, log: (line: string) => void): Promise<string | undefined> {
  try {
    const saved = await store.getPolicyMemo();
    if (!saved) return undefined;
    const text = (await gunzipAsync(saved.body)).toString('utf8');
    const age_min = Math.max(0, Math.round((Date.now() - saved.saved_ms) / 60_000));
    const kB = saved.body.byteLength / 1000;
    const size = kB < 1000 ? `${Math.ceil(kB)} kB` : `${(kB / 1000).toFixed(1)} MB`;
    log(`policy memos: ${size} saved ${age_min} min ago, read back`);
    return text;
  } catch (error) {
    log(`policy memos: not read back (${(error as Error).message}); the first round computes them`);
    return undefined;
  }
}

/**
 * Saves the policy's memos to the store every `every_ms` and once more at `stop`; not while the
 * disk of the store (`free_bytes`) has less than MIN_FREE_BYTES beside four times the memos' size:
 * a cache must not take the space the store needs to record exits and state changes.
 */
export class PolicyMemoSaver {
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();
  /** A save was skipped for space (said once until a save succeeds). */
  private skipped = false;

  constructor(
    private readonly store: Store,
    private readonly memo: () => Promise<string | undefined>,
    private readonly log: (line: string) => void,
    private readonly free_bytes: () => number | undefined = () => undefined,
    private readonly every_ms = MEMO_SAVE_EVERY_MS,
  ) {}

  /** Starts the timer; returns this saver. */
  start(): this {
    this.timer = setInterval(() => void this.save(), this.every_ms).unref();
    return this;
  }

  /** One save after any under way; failures are logged. */
  save(): Promise<void> {
    this.saving = this.saving.then(() => this.saveOnce());
    return this.saving;
  }

  /** Stops the timer and saves once more (after the last round). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.save();
  }

  private async saveOnce(): Promise<void> {
    try {
      const json = await this.memo();
      if (json === undefined) return;
      const body = await gzipAsync(Buffer.from(json, 'utf8'));
      const free = this.free_bytes();
      if (free !== undefined && free < MIN_FREE_BYTES + 4 * body.byteLength) {
        if (!this.skipped)
          this.log(
            `policy memos: not saved (${mibText(free)} free on the store's disk, ` +
              `they take ${mibText(body.byteLength)}); a restart computes them again`,
          );
        this.skipped = true;
        return;
      }
      await this.store.putPolicyMemo({ saved_ms: Date.now(), body });
      this.skipped = false;
    } catch (error) {
      this.log(`policy memos: not saved (${(error as Error).message}); a restart computes them again`);
    }
  }
}
