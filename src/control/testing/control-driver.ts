/**
 * The control plane as the parity tests drive it (src/model/parity.test.ts, parity-typed.test.ts):
 * ReportIngest and ProfileBook over a real in-memory SQLite store, one node of 16 CPU slots (GPU
 * type `cpu`), and a job that reports one measured step at a time. Test-only (not shipped:
 * package.json "files").
 */
import type { BackendNode } from '../../backends/backend.js';
import { cpuSlots } from '../../backends/local/devices.js';
import type { BatchLimits } from '../../goodput/types.js';
import { gpuTypeOf, ProfileBook } from '../reports/profile-book.js';
import { ReportIngest } from '../reports/report-ingest.js';
import { trainSpecFixture } from '../../store/job-fixture.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { JobRecord, JobSpec } from '../../store/types.js';
import { measuredStepFixture } from '../../goodput/testing/perf-fixture.js';

/** The test's one node: 16 CPU slots, so its GPU type is `cpu`. */
export const PARITY_NODE: BackendNode = {
  name: 'local',
  address: '127.0.0.1',
  usable: 16,
  note: '',
  devices: Array.from({ length: 16 }, (_, index) => ({ index, kind: 'cpu' as const, name: 'cpu-slot' })),
};

/** A node of `slots` CPU slots (GPU type `cpu`) at 127.0.0.1, all usable unless `usable` says. */
export function cpuNodeFixture(slots: number, name = 'local', usable = slots): BackendNode {
  return { name, address: '127.0.0.1', usable, note: '', devices: cpuSlots(slots) };
}

/** A preemptible job of profile key `profile`, of at most `max_replicas` replicas. */
export function paritySpec(profile: string, max_replicas: number): JobSpec {
  return trainSpecFixture({ profile, max_replicas });
}

/**
 * Step `step` of a job of 64,000 samples at local batch 64 on one node, as the SDK reports it:
 * one replica, `step_time_s` a step with no synchronization and a fixed gradient noise; `extra`
 * overrides (num_replicas, sync_time_s...).
 */
export function trainingReport<E extends object = object>(step: number, step_time_s: number, extra?: E) {
  return measuredStepFixture({
    ...{ time_s: 1e9 + step, step, epoch: 0, local_bsz: 64, step_time_s, grad_sqr: 1, grad_var: 20 },
    ...{ samples: step * 64, remaining_samples: 64_000 - step * 64, loss: 1 },
    ...extra,
  });
}

/** One measured step as a job reports it: one node, no accumulation. */
export interface ParityStep {
  replicas: number;
  local_bsz: number;
  step_s: number;
  sync_s: number;
  sqr: number;
  variance: number;
  /** Samples done; the job says 100,000 in all. */
  samples: number;
}

/** The control plane's report path and profiles, and how a job reports a step to it. */
export interface ControlDriver {
  store: SqliteStore;
  profiles: ProfileBook;
  ingest: ReportIngest;
  /** Reports `s` as job `id`'s step number `step`, and lets the refit it starts finish. */
  report(id: string, step: number, limits: BatchLimits, s: ParityStep): Promise<void>;
  stop(): Promise<void>;
}

/** How the control plane is wired; by default as the parity tests use it. */
export interface ControlDriverOptions {
  /** The cluster's nodes (default: PARITY_NODE alone). */
  nodes?: readonly BackendNode[];
  /** Default 1e9: no refit by interval, each report's refit is the first of its batch. */
  refit_interval_s?: number;
  /** One profile per key for all users (ProfileBook's `shared`). */
  shared?: boolean;
  /** Where ProfileBook logs (default: nowhere). */
  log?: (line: string) => void;
  /** Whether refits are kept per GPU type, as the controller wires a cluster of several types. */
  typed?: boolean;
  /** The report path's clock (default: always 0). */
  now_ms?: () => number;
  /** The store (default: a fresh in-memory one), to run several report paths over one. */
  store?: SqliteStore;
  /** No profiles at all: the report path of a policy that uses none (ReportIngest without `profiles`). */
  without_profiles?: boolean;
}

/** A fresh control plane on an in-memory SQLite store. */
export function controlDriver(options: ControlDriverOptions = {}): ControlDriver {
  const nodes = options.nodes ?? [PARITY_NODE];
  const store = options.store ?? new SqliteStore(':memory:');
  const profiles = new ProfileBook(store, () => nodes, options.log ?? (() => {}), options.shared === true);
  const ingest = new ReportIngest({
    store,
    refit_interval_s: options.refit_interval_s ?? 1e9,
    now_ms: options.now_ms ?? (() => 0),
    log: () => {},
    request_round: () => {},
    ...(options.without_profiles ? {} : { profiles }),
    ...(options.typed ? { gpu_type_of: (job: JobRecord) => gpuTypeOf(job, nodes) } : {}),
  });
  const report = async (id: string, step: number, limits: BatchLimits, s: ParityStep): Promise<void> => {
    const { replicas: num_replicas, local_bsz, step_s: step_time_s, sync_s: sync_time_s } = s;
    await ingest.report({
      job_id: id,
      attempt: 0,
      limits,
      reports: [
        {
          ...{ time_s: 1e9 + step, step, epoch: 0, num_nodes: 1, num_replicas, local_bsz, accum_steps: 0 },
          ...{ step_time_s, sync_time_s, grad_sqr: s.sqr, grad_var: s.variance },
          ...{ samples: s.samples, remaining_samples: 100_000 - s.samples, loss: 1 },
        },
      ],
    });
    // Refits after the first run off the request: let them finish.
    for (let k = 0; k < 5; k++) await new Promise((done) => setImmediate(done));
  };
  return { store, profiles, ingest, report, stop: () => ingest.stop() };
}
