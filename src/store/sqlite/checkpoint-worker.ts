/**
 * Worker thread that checkpoints the WAL of a SQLite store in the background (PRAGMA
 * wal_checkpoint(PASSIVE) every `interval_ms`), so the fsyncs of checkpoints never block the
 * server's event loop. PASSIVE never blocks writers or readers, but under a steady stream of
 * commits it never catches up with the end of the WAL, so SQLite never starts the WAL over and
 * the file grows without bound. Once the file exceeds `truncate_bytes`, a TRUNCATE checkpoint
 * follows the PASSIVE one: it has only the frames written meanwhile left to copy, holds the
 * write lock for that short while, and resets the file to zero bytes. Started by `SqliteStore`.
 */
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { path, interval_ms, truncate_bytes } = workerData as {
  path: string;
  interval_ms: number;
  truncate_bytes: number;
};
const db = new Database(path);
db.pragma('busy_timeout = 1000');
const walBytes = () => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};
// The size is watched four times per interval, so that a fast writer cannot outgrow the limit
// between two checkpoints, and a TRUNCATE that found the database busy is retried soon.
let tick = 0;
const timer = setInterval(
  () => {
    try {
      const over = walBytes() > truncate_bytes;
      if (over || tick++ % 4 === 0) db.pragma('wal_checkpoint(PASSIVE)');
      if (over) db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Busy or closing: the next tick (or SQLite's own checkpoint at close) catches up.
    }
  },
  Math.max(1, interval_ms / 4),
);
parentPort?.on('message', (message) => {
  if (message === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort?.close();
  }
});
