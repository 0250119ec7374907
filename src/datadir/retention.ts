/**
 * Retention of what jobs leave in the data directory (it shares its disk with the store): each
 * replica log is capped (its oldest part dropped, its newest kept), and the checkpoints of a job
 * that ended are removed once it has been over for the retention time.
 */
import {
  closeSync,
  existsSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { isTerminal } from '../store/lifecycle.js';
import type { Store } from '../store/store.js';
import type { Turns } from '../util/turns.js';

/** Retention settings (`goodput up --log-limit-mb`, `--checkpoint-retention-h`). */
export interface RetentionOptions {
  /** Largest replica log kept (bytes); past it the oldest part is dropped. 0: no cap. */
  log_limit_bytes: number;
  /** Checkpoints of an ended job are removed this long after it ended (ms). Infinity: kept. */
  checkpoint_retention_ms: number;
}

/** What one sweep did. */
export interface RetentionSweep {
  logs_trimmed: number;
  checkpoints_removed: number;
}

/**
 * Cuts a log past `limit_bytes` down to its newest half, after a line saying how much was
 * dropped. The replica keeps appending (its log is opened O_APPEND), so its next write lands
 * after the kept part; at most what it writes during the cut is lost.
 */
export function capLog(path: string, limit_bytes: number): boolean {
  const size = statSync(path).size;
  if (limit_bytes <= 0 || size <= limit_bytes) return false;
  const keep = Math.floor(limit_bytes / 2);
  const fd = openSync(path, 'r+');
  try {
    const tail = Buffer.alloc(keep);
    const read = readSync(fd, tail, 0, keep, size - keep);
    const head = Buffer.from(
      `[goodput: ${size - read} earlier bytes of this log were dropped (log limit ${limit_bytes} bytes)]\n`,
    );
    writeSync(fd, head, 0, head.length, 0);
    writeSync(fd, tail, 0, read, head.length);
    ftruncateSync(fd, head.length + read);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * One pass over `jobs_dir` (DIR/jobs): caps logs, removes expired checkpoints. Errors of one job
 * do not stop the pass. `turns`: the pass gives way between jobs (thousands of job directories
 * read synchronously held a server's reports for 180 ms, issue #49).
 */
export async function sweepRetention(
  jobs_dir: string,
  store: Pick<Store, 'getJob'>,
  o: RetentionOptions,
  now_ms: number,
  turns?: Turns,
): Promise<RetentionSweep> {
  const done: RetentionSweep = { logs_trimmed: 0, checkpoints_removed: 0 };
  if (!existsSync(jobs_dir)) return done;
  for (const id of readdirSync(jobs_dir)) {
    await turns?.pause();
    try {
      const logs = join(jobs_dir, id, 'logs');
      if (o.log_limit_bytes > 0 && existsSync(logs)) {
        for (const f of readdirSync(logs))
          if (f.endsWith('.log') && capLog(join(logs, f), o.log_limit_bytes)) done.logs_trimmed++;
      }
      const checkpoint = join(jobs_dir, id, 'checkpoint');
      if (!Number.isFinite(o.checkpoint_retention_ms) || !existsSync(checkpoint)) continue;
      const job = await store.getJob(id);
      if (
        job &&
        isTerminal(job.state) &&
        job.finished_at_ms !== null &&
        now_ms - job.finished_at_ms >= o.checkpoint_retention_ms
      ) {
        rmSync(checkpoint, { recursive: true, force: true });
        done.checkpoints_removed++;
      }
    } catch {
      // A job's files may vanish or be unreadable meanwhile: the next sweep tries again.
    }
  }
  return done;
}
