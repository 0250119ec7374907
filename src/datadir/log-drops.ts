/**
 * Events that say what the log cap dropped (issue 47 item 6). A replica's log writer
 * (backends/local/log-writer.ts) keeps the totals it dropped in its run file
 * `attempt-A-rank-R.log-dropped`; each sweep turns a grown total into a `log-dropped` event on
 * the job: at once the first time, then at most every 10 minutes while the replica writes, and
 * once more with the final total when its writer has ended. What was reported is kept beside it
 * (`.log-dropped.reported`), so a restarted server neither repeats nor misses an event.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLogDrop } from '../backends/local/log-writer.js';
import type { Store } from '../store/store.js';
import type { Turns } from '../util/turns.js';

/** Least time between two events of one replica's log while it keeps dropping. */
export const LOG_DROP_EVENT_EVERY_MS = 10 * 60_000;

const DROPPED = /^attempt-(\d+)-rank-(\d+)\.log-dropped$/;

/**
 * Records a `log-dropped` event for each replica log whose dropped total grew; returns how many.
 * `turns`: gives way between jobs, as sweepRetention does.
 */
export async function reportLogDrops(
  jobs_dir: string,
  store: Pick<Store, 'recordEvent'>,
  now_ms: number,
  turns?: Turns,
): Promise<number> {
  if (!existsSync(jobs_dir)) return 0;
  let recorded = 0;
  for (const id of readdirSync(jobs_dir)) {
    await turns?.pause();
    const run = join(jobs_dir, id, 'run');
    let names: string[];
    try {
      names = readdirSync(run);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = DROPPED.exec(name);
      if (!m) continue;
      const base = join(run, name.slice(0, -'.log-dropped'.length));
      try {
        const drop = readLogDrop(base);
        if (drop === undefined) continue;
        const [bytes, at_ms] = readReported(base);
        const ended = existsSync(base + '.log-done');
        if (drop.bytes <= bytes || (!ended && bytes > 0 && now_ms - at_ms < LOG_DROP_EVENT_EVERY_MS)) continue;
        const [attempt, rank] = [Number(m[1]), Number(m[2])];
        const mib = (drop.bytes / 2 ** 20).toFixed(1);
        await store.recordEvent(
          id,
          'log-dropped',
          'goodput',
          `replica ${rank}'s log reached its cap${ended ? '' : ' (so far)'}: its oldest ${mib} MiB (` +
            `${drop.lines} lines) were dropped and the newest part kept (goodput up --log-limit-mb)`,
          { attempt, rank, dropped_bytes: drop.bytes, dropped_lines: drop.lines, final: ended },
        );
        writeFileSync(base + '.log-dropped.reported', `${drop.bytes} ${now_ms}\n`, { mode: 0o600 });
        recorded++;
      } catch {
        // A job removed meanwhile (E_NOT_FOUND), or its files: the next sweep tries again.
      }
    }
  }
  return recorded;
}

/** Bytes already reported and when ([0, 0] before the first report). */
function readReported(base: string): [number, number] {
  try {
    const [bytes, at] = readFileSync(base + '.log-dropped.reported', 'utf8')
      .trim()
      .split(' ')
      .map(Number);
    return [Number.isFinite(bytes) ? bytes! : 0, Number.isFinite(at) ? at! : 0];
  } catch {
    return [0, 0];
  }
}
