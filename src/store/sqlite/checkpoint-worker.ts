/**
 * Worker thread that checkpoints the WAL of a SQLite store in the background (PRAGMA
 * wal_checkpoint(PASSIVE) every `interval_ms`), so the fsyncs of checkpoints never block the
 * server's event loop. PASSIVE never blocks writers or readers. Started by `SqliteStore`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { path, interval_ms } = workerData as { path: string; interval_ms: number };
const db = new Database(path);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or closing: the next tick (or SQLite's own checkpoint at close) catches up.
  }
}, interval_ms);
parentPort?.on('message', (message) => {
  if (message === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort?.close();
  }
});
