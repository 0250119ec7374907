/**
 * A control-plane store as a busy cluster leaves it, for `npm run bench:dashboard`: jobs
 * submitted over the last hours (most finished after running, some running on every GPU, the
 * rest queued), each that ran with its replicas, reports and fitted model. Built through the
 * real Store operations with an injected clock, so the history has real timestamps.
 */
import { reportBatch } from '../src/store/report-batch.js';
import type { NodeView } from '../src/api/views.js';
import { hashToken } from '../src/control/tokens.js';
import { Random } from '../src/core/random.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { JobSpec } from '../src/store/types.js';
import { limitsFixture } from '../src/goodput/testing/perf-fixture.js';
import { BENCH_PERF, benchStep } from './bench-job.js';

export interface Fixture {
  store: SqliteStore;
  nodes: NodeView[];
  token: string;
}

const spec: JobSpec = {
  name: 'bench',
  command: ['python', 'train.py'],
  workdir: '/tmp',
  env: {},
  min_replicas: 0,
  max_replicas: 8,
  max_restarts: 3,
  preemptible: true,
  priority: 0,
};
const limits = limitsFixture();

/** `jobs` jobs on `num_nodes` x `gpus_per_node` GPUs, all held by running jobs at the end. */
export async function buildFixture(
  path: string,
  jobs: number,
  num_nodes: number,
  gpus_per_node: number,
): Promise<Fixture> {
  const end_ms = Date.now();
  let clock = end_ms - 3 * 3_600_000;
  const step_ms = (3 * 3_600_000) / jobs;
  const store = new SqliteStore(path, { now_ms: () => clock });
  const token = 'gpa_bench-dashboard';
  await store.putToken({ hash: hashToken(token), user: 'admin', admin: true, created_at_ms: clock });
  const rng = new Random(1);
  const free: [number, number][] = [];
  for (let n = 0; n < num_nodes; n++) for (let g = 0; g < gpus_per_node; g++) free.push([n, g]);
  const running: { id: string; held: [number, number][] }[] = [];
  const holder = new Map<string, string>();
  for (let i = 0; i < jobs; i++) {
    clock += step_ms;
    const id = `job${String(i).padStart(5, '0')}`;
    await store.createJob({ id, name: `train-${i % 97}-${i}`, user: `user${i % 20}`, spec }, `user${i % 20}`);
    // Finish a running job now and then, so the GPUs turn over and the history has bands.
    if (running.length > 0 && free.length === 0 && rng.next() < 0.6) {
      const done = running.splice(Math.floor(rng.next() * running.length), 1)[0]!;
      for (let r = 0; r < done.held.length; r++)
        await store.recordReplicaExit({ job_id: done.id, attempt: 0, rank: r, exit_code: 0 }, 'backend');
      await store.finishJob(done.id, rng.next() < 0.9 ? 'succeeded' : 'failed', 'controller', 'every replica exited 0');
      free.push(...done.held);
      for (const [n, g] of done.held) holder.delete(`${n}:${g}`);
    }
    const want = 1 + Math.floor(rng.next() * 8);
    if (free.length < want) {
      if (rng.next() < 0.3) await store.finishJob(id, 'cancelled', 'user', 'cancelled by its user');
      continue;
    }
    const held = free.splice(0, want);
    await store.assignJob(
      id,
      { allocation: held.map(([n]) => n), devices: held.map(([, g]) => g) },
      clock,
      'scheduler',
      `bench: 0 -> ${want} replicas`,
    );
    await store.launchJob(
      id,
      held.map(([, g], rank) => ({
        rank,
        device: g,
        node: `node-${String(held[rank]![0]).padStart(2, '0')}`,
        launch_id: '',
        pid: 1,
        proc_start: '',
        log_path: '',
        started_at_ms: clock,
      })),
      'backend',
      'attempt 0',
    );
    await store.addReports(
      reportBatch(id, 0, limits, [
        benchStep({
          time_s: clock / 1000,
          step: 100,
          num_nodes: new Set(held.map(([n]) => n)).size,
          num_replicas: want,
          samples: 6400,
          remaining_samples: 100_000,
        }),
      ]),
    );
    await store.saveRefit({ job_id: id, perf: BENCH_PERF, correction: null });
    running.push({ id, held });
    for (const [n, g] of held) holder.set(`${n}:${g}`, id);
  }
  const nodes: NodeView[] = Array.from({ length: num_nodes }, (_, n) => ({
    name: `node-${String(n).padStart(2, '0')}`,
    usable: gpus_per_node,
    note: '',
    gpu_types: ['NVIDIA H100'],
    devices: Array.from({ length: gpus_per_node }, (_, g) => ({
      index: g,
      kind: 'gpu' as const,
      name: 'NVIDIA H100',
      type: 'NVIDIA H100',
      job: holder.get(`${n}:${g}`) ?? null,
      busy: holder.has(`${n}:${g}`),
    })),
  }));
  clock = end_ms;
  return { store, nodes, token };
}
