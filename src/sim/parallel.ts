import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { GoodputError } from '../core/errors.js';
import type { RunSettings, WorkloadReport } from './run-workload.js';
import type { WorkerMessage } from './worker.js';

/** One simulation to run: a workload file under some settings. */
export interface SimTask {
  file: string;
  settings: RunSettings;
}

/** Progress of task `index` (simulated time and completed jobs). */
export interface TaskProgress {
  index: number;
  now_s: number;
  last_arrival_s: number;
  completed: number;
  total: number;
  done: boolean;
}

function spawn(task: SimTask): Worker {
  const compiled = import.meta.url.endsWith('.js');
  // Under tsx (development) the worker is TypeScript and needs the tsx loader.
  const url = new URL(compiled ? './worker.js' : './worker.ts', import.meta.url);
  return new Worker(url, { workerData: task, execArgv: compiled ? [] : ['--import', 'tsx'] });
}

/**
 * Runs `tasks` in worker threads, at most `concurrency` at once (default: the machine's
 * available parallelism), and returns the reports in task order. The first failure rejects
 * (GoodputError with the worker's code and message) after the running workers are stopped.
 */
export async function runParallel(
  tasks: readonly SimTask[],
  onProgress?: (p: TaskProgress) => void,
  concurrency = availableParallelism(),
): Promise<WorkloadReport[]> {
  const reports: WorkloadReport[] = new Array(tasks.length);
  const running = new Set<Worker>();
  let next = 0;
  let failed: GoodputError | undefined;
  const fail = (error: GoodputError) => {
    failed ??= error;
    for (const w of running) void w.terminate();
  };
  const runOne = (index: number): Promise<void> =>
    new Promise((resolve) => {
      const worker = spawn(tasks[index]!);
      running.add(worker);
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        running.delete(worker);
        resolve();
      };
      worker.on('message', (m: WorkerMessage) => {
        if (m.type === 'progress')
          onProgress?.({
            index,
            now_s: m.now_s,
            last_arrival_s: m.last_arrival_s,
            completed: m.completed,
            total: m.total,
            done: false,
          });
        else if (m.type === 'done') {
          reports[index] = m.report;
          onProgress?.({
            index,
            now_s: 0,
            last_arrival_s: 0,
            completed: m.report.num_jobs,
            total: m.report.num_jobs,
            done: true,
          });
        } else {
          fail(
            m.internal
              ? new GoodputError('E_INTERNAL', `simulation of ${tasks[index]!.file} failed: ${m.message}`, m.exitCode)
              : new GoodputError(m.code, m.message, m.exitCode),
          );
        }
      });
      worker.on('error', (error) => {
        fail(
          new GoodputError('E_INTERNAL', `simulation worker for ${tasks[index]!.file} crashed: ${error.message}`, 70),
        );
        finish();
      });
      worker.on('exit', finish);
    });
  const lane = async (): Promise<void> => {
    while (next < tasks.length && !failed) await runOne(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, tasks.length)) }, lane));
  for (const w of running) await w.terminate();
  if (failed) throw failed;
  return reports;
}
