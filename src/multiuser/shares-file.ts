/**
 * The shares file of `goodput up --shares FILE` and `goodput sim --shares FILE` (issue 48): read
 * with a bound on its size, parsed by policy/shares/config.ts, and re-read by the server when it
 * changes (SharesFile.current: the file's modification time is checked every round), so an
 * admin edits it without a restart. A file that turns malformed while the server runs keeps the
 * last good shares in force and is reported once per change.
 */
import { statSync } from 'node:fs';

import { GoodputError } from '../core/errors.js';
import { parseShares, type SharesConfig } from '../policy/shares/index.js';
import { readBoundedText, sizeWords } from '../util/bounded-file.js';

const MAX_BYTES = 64 * 1024;

/** The shares in `path`; E_SHARES (line and fix) when malformed, E_INPUT when unreadable. */
export function readSharesFile(path: string): SharesConfig {
  const read = readBoundedText(path, MAX_BYTES, true);
  if ('text' in read) return parseShares(read.text, path);
  if (read.refused === 'too-large')
    throw new GoodputError('E_SHARES', `${path}: shares file is over ${sizeWords(MAX_BYTES)}; is this the right file?`);
  if (read.refused === 'not-regular') throw new GoodputError('E_INPUT', `shares file ${path} is not a regular file`);
  throw new GoodputError('E_INPUT', `cannot read shares file ${path}: ${read.message}`);
}

/** A shares file followed by its modification time (the server's; see the module comment). */
export class SharesFile {
  private shares: SharesConfig;
  private stamp: string;

  /** Reads `path` now: a malformed file refuses the start. */
  constructor(
    readonly path: string,
    private readonly log: (line: string) => void,
  ) {
    this.stamp = this.stampNow();
    this.shares = readSharesFile(path);
  }

  private stampNow(): string {
    try {
      const st = statSync(this.path);
      return `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      return 'missing';
    }
  }

  /** The shares in force: re-read when the file changed since the last call. */
  current(): SharesConfig {
    const stamp = this.stampNow();
    if (stamp === this.stamp) return this.shares;
    this.stamp = stamp;
    try {
      this.shares = readSharesFile(this.path);
      this.log(`shares: reloaded ${this.path} (${this.shares.teams.length} team(s))`);
    } catch (error) {
      this.log(`shares: ${(error as Error).message}; keeping the shares in force until the file is fixed`);
    }
    return this.shares;
  }
}
