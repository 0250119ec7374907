import { addToProfile, emptyProfile, type GradSample, type KeyProfile } from '../goodput/key-profile.js';
import type { PerfParams, ProfilePoint } from '../goodput/types.js';

/** GPU type of the simulated cluster (the traces are of one GPU type). */
export const SIM_GPU_TYPE = 'sim';

/**
 * Gradient samples are kept at this resolution of training progress (fraction done), so a
 * profile holds at most 1 / PROGRESS_STEP + 1 of them whatever the number of jobs.
 */
export const PROGRESS_STEP = 0.02;

interface Entry {
  profile: KeyProfile;
  /** Bumped when a new placement shape (num_nodes, num_replicas) is merged in. */
  shape_version: number;
  shapes: Set<string>;
  fit?: { shape_version: number; perf: PerfParams };
}

/**
 * The simulator's profile store (issue #18): one per simulation run, keyed by profile key (the
 * application name) on the cluster's single GPU type. It learns only from what simulated jobs
 * report (profile points of the configurations they ran, gradient statistics with the fraction
 * of training done), never from the trace tables. Deterministic: the simulator feeds it in job
 * order, once per round.
 */
export class SimProfileStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly fit: (points: readonly ProfilePoint[]) => PerfParams) {}

  /** The profile of `key`, if any job reported to it. */
  get(key: string): KeyProfile | undefined {
    return this.entries.get(key)?.profile;
  }

  /** Changes when a new placement shape of `key` is measured; 0 before any. */
  shapeVersion(key: string): number {
    return this.entries.get(key)?.shape_version ?? 0;
  }

  /** Number of profiles (keys) reported to. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Throughput parameters fitted on the profile's points alone, refitted lazily when a new
   * shape was measured (new local batches at a known shape refine it at the next new shape).
   */
  profileFit(key: string): PerfParams | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.profile.points.length === 0) return undefined;
    if (!entry.fit || entry.fit.shape_version !== entry.shape_version) {
      entry.fit = { shape_version: entry.shape_version, perf: this.fit(entry.profile.points) };
    }
    return entry.fit.perf;
  }

  /** Merges one job's new reports into `key`'s profile; `new_job` counts the job once. */
  report(key: string, points: readonly ProfilePoint[], grad: readonly GradSample[], new_job: boolean): void {
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { profile: emptyProfile(key, SIM_GPU_TYPE), shape_version: 0, shapes: new Set() }));
    entry.profile = addToProfile(entry.profile, points, grad, new_job);
    for (const p of points) {
      const shape = `${p.num_nodes}:${p.num_replicas}`;
      if (!entry.shapes.has(shape)) {
        entry.shapes.add(shape);
        entry.shape_version++;
      }
    }
  }
}
