import { addToProfile, emptyProfile, shapeKey, type GradSample, type KeyProfile } from '../goodput/key-profile.js';
import { fitNetworkModel, predictPerfParams, type NetworkParams } from '../goodput/network-model.js';
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
  fit?: { version: number; perf: PerfParams };
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
  /** Multi-node placement shapes measured over all keys: the network model's input changed. */
  private multiNodeShapes = 0;
  private net: { shapes: number; params: NetworkParams | undefined } | undefined;

  /**
   * `fit` fits a job's throughput parameters; with `network`, jobs whose points span one node
   * only get their cross-node terms from the cluster network model (goodput/network-model.ts)
   * fitted on every key's profile, instead of from their own one-node fit.
   */
  constructor(
    private readonly fit: (points: readonly ProfilePoint[]) => PerfParams,
    private readonly network = false,
  ) {}

  /**
   * Changes whenever a job's model of `key` should be refitted: its key's profile gained a
   * placement shape, or (with the network model) any key gained a multi-node shape.
   */
  modelVersion(key: string): number {
    return (this.entries.get(key)?.shape_version ?? 0) + (this.network ? this.multiNodeShapes : 0);
  }

  /**
   * Throughput parameters of a job fitted on `points`; `own_only`: the job has no profile to
   * start from (the first of its key, or one whose profile was discarded), so with the network
   * model its cross-node terms come from the cluster's reports while it spans one node only.
   */
  fitJob(points: readonly ProfilePoint[], own_only = false, model_parameters?: number): PerfParams {
    if (!own_only || !this.network || points.some((p) => p.num_nodes > 1)) return this.fit(points);
    return predictPerfParams(points, this.networkParams(), model_parameters);
  }

  /** The cluster network model over every key's profile, refitted when a multi-node shape was added. */
  private networkParams(): NetworkParams | undefined {
    if (!this.net || this.net.shapes !== this.multiNodeShapes) {
      this.net = { shapes: this.multiNodeShapes, params: fitNetworkModel([...this.entries.values()].map((e) => e.profile), {}, this.fit) };
    }
    return this.net.params;
  }

  /** The profile of `key`, if any job reported to it. */
  get(key: string): KeyProfile | undefined {
    return this.entries.get(key)?.profile;
  }

  /** Number of profiles (keys) reported to. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Throughput parameters fitted on the profile's points alone (fitJob), refitted lazily when
   * modelVersion changes (new local batches at a known shape refine it at the next new shape).
   */
  profileFit(key: string): PerfParams | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.profile.points.length === 0) return undefined;
    const version = this.modelVersion(key);
    if (!entry.fit || entry.fit.version !== version) entry.fit = { version, perf: this.fitJob(entry.profile.points) };
    return entry.fit.perf;
  }

  /**
   * Merges one job's new reports into `key`'s profile; `new_job` counts the job once;
   * `model_parameters`: its model's parameter count, when it reports one.
   */
  report(key: string, points: readonly ProfilePoint[], grad: readonly GradSample[], new_job: boolean, model_parameters?: number): void {
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { profile: emptyProfile(key, SIM_GPU_TYPE), shape_version: 0, shapes: new Set() }));
    entry.profile = addToProfile(entry.profile, points, grad, new_job, model_parameters);
    for (const p of points) {
      const shape = shapeKey(p);
      if (!entry.shapes.has(shape)) {
        entry.shapes.add(shape);
        entry.shape_version++;
        if (p.num_nodes > 1) this.multiNodeShapes++;
      }
    }
  }
}
