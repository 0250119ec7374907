/**
 * The store of a large lab for bench:scale's server part (issue #49): ended jobs of the last 30
 * days written in one transaction (bench/soak/big-store.ts), then the active jobs through the
 * real Store operations (an injected clock): queued ones, and running ones that each hold two
 * whole 4-GPU nodes with their replicas, reports and fitted model. The running replicas are
 * returned so that the server's FakeBackend finds them alive, as a restarted server finds its
 * cluster.
 */
import { reportBatch } from '../../src/store/report-batch.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { JobSpec } from '../../src/store/types.js';
import { limitsFixture } from '../../src/goodput/testing/perf-fixture.js';
import { BENCH_PERF, benchStep } from '../bench-job.js';
import { writeHistory } from '../soak/big-store.js';
import { nodeName, type SeededReplica } from './seeded-cluster.js';

/** Sizes of the fixture. */
export interface ServerFixtureSize {
  /** Jobs in the store, ended ones included. */
  jobs: number;
  running: number;
  queued: number;
  /** Nodes of `gpus_per_node` GPUs; each running job holds two whole nodes. */
  nodes: number;
  gpus_per_node: number;
}

/** The program of every job: runs until stopped (the fake backend runs `node -e` programs). */
export const IDLE_PROGRAM = 'setInterval(() => {}, 3600000)';

/** Writes the store at `path`; returns the running replicas. */
export async function writeServerStore(path: string, size: ServerFixtureSize): Promise<SeededReplica[]> {
  const now = Date.now();
  writeHistory(path, size.jobs - size.running - size.queued, now - 3_600_000);
  let clock = now - 3_600_000;
  const store = new SqliteStore(path, { now_ms: () => clock, background_checkpoint_ms: 0 });
  const limits = limitsFixture();
  const seeds: SeededReplica[] = [];
  try {
    const active = size.running + size.queued;
    for (let i = 0; i < active; i++) {
      clock += 3_600_000 / active / 2;
      const id = `a${String(i).padStart(6, '0')}`;
      const user = `user${i % 20}`;
      const spec: JobSpec = {
        name: `train-${i % 97}`,
        command: [process.execPath, '-e', IDLE_PROGRAM],
        workdir: '/tmp',
        env: {},
        min_replicas: 0,
        max_replicas: 16,
        max_restarts: 3,
        preemptible: true,
        priority: 0,
      };
      await store.createJob({ id, name: spec.name, user, spec }, user);
      if (i >= size.running) continue;
      const gpus = size.gpus_per_node;
      const held = [2 * i, 2 * i + 1].flatMap((n) => Array.from({ length: gpus }, (_, g) => [n, g] as const));
      await store.assignJob(
        id,
        { allocation: held.map(([n]) => n), devices: held.map(([, g]) => g) },
        clock,
        'scheduler',
        `bench: 0 -> ${held.length} replicas`,
      );
      await store.launchJob(
        id,
        held.map(([n, g], rank) => ({
          rank,
          device: g,
          node: nodeName(n),
          launch_id: '',
          pid: 0,
          proc_start: '',
          log_path: '',
          started_at_ms: clock,
        })),
        'backend',
        'attempt 0',
      );
      held.forEach(([n], rank) => seeds.push({ job_id: id, attempt: 0, rank, node: nodeName(n) }));
      await store.addReports(
        reportBatch(id, 0, limits, [
          benchStep({
            time_s: clock / 1000,
            step: 100,
            num_nodes: 2,
            num_replicas: held.length,
            samples: 6400,
            remaining_samples: 1_000_000,
          }),
        ]),
      );
      await store.saveRefit({ job_id: id, perf: BENCH_PERF, correction: null });
    }
  } finally {
    await store.close();
  }
  return seeds;
}
