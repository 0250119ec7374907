import { parentPort, workerData } from 'node:worker_threads';
import { GoodputError, type ErrorCode } from '../core/errors.js';
import { runWorkload, type RunSettings } from './run-workload.js';

/** Message a simulation worker posts to its parent. */
export type WorkerMessage =
  | { type: 'progress'; now_s: number; last_arrival_s: number; completed: number; total: number }
  | { type: 'done'; report: Awaited<ReturnType<typeof runWorkload>> }
  | { type: 'error'; code: ErrorCode; message: string; exitCode: number; internal: boolean };

interface WorkerInput {
  file: string;
  settings: RunSettings;
}

// Runs one workload and reports back; progress is throttled to ~10 messages per second.
if (parentPort) {
  const port = parentPort;
  const { file, settings } = workerData as WorkerInput;
  let last = 0;
  try {
    const report = await runWorkload(file, settings, (p) => {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      port.postMessage({ type: 'progress', ...p } satisfies WorkerMessage);
    });
    port.postMessage({ type: 'done', report } satisfies WorkerMessage);
  } catch (error) {
    const g = error instanceof GoodputError;
    port.postMessage({
      type: 'error',
      code: g ? error.code : 'E_INTERNAL',
      message: error instanceof Error ? (g ? error.message : (error.stack ?? error.message)) : String(error),
      exitCode: g ? error.exitCode : 70,
      internal: !g,
    } satisfies WorkerMessage);
  }
}
