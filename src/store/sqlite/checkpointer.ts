import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/**
 * Starts the checkpoint worker and turns off checkpoints inside commits; when the worker cannot
 * start (e.g. running from TypeScript sources), SQLite's automatic checkpoints stay on.
 */
export function startCheckpointer(
  db: Database.Database,
  path: string,
  interval_ms: number,
  truncate_bytes: number,
): Worker | undefined {
  const script = new URL('./checkpoint-worker.js', import.meta.url);
  if (!existsSync(fileURLToPath(script))) return undefined;
  const worker = new Worker(script, { workerData: { path, interval_ms, truncate_bytes } });
  worker.unref();
  worker.on('error', () => db.open && db.pragma('wal_autocheckpoint = 1000'));
  db.pragma('wal_autocheckpoint = 0');
  return worker;
}
