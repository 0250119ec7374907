import { shapeKey, type GradSample, type KeyProfile } from '../goodput/key-profile.js';
import type { NetworkParams } from '../goodput/network-model.js';
import type { PerfParams, ProfilePoint } from '../goodput/types.js';
import { NetworkModelCache } from '../model/network.js';
import { ProfileKeeper } from '../model/profile-keeper.js';

/** GPU type of the simulated cluster (the traces are of one GPU type). */
export const SIM_GPU_TYPE = 'sim';

/** What the store keeps beside a key's profile, to know when to refit. */
interface Entry {
  /** Bumped when a new placement shape (num_nodes, num_replicas) is merged in. */
  shape_version: number;
  shapes: Set<string>;
  fit?: { version: number; perf: PerfParams };
}

/**
 * The simulator's profile store: one per simulation run, keyed by profile key (the
 * application name) on the cluster's single GPU type. It learns only from what simulated jobs
 * report (profile points of the configurations they ran, gradient statistics with the fraction
 * of training done), never from the trace tables. Deterministic: the simulator feeds it in job
 * order, once per round. The profiles are kept by model/profile-keeper.ts, the control plane's rule.
 */
export class SimProfileStore {
  private readonly keeper = new ProfileKeeper();
  private readonly entries = new Map<string, Entry>();
  /** Multi-node placement shapes measured over all keys: the network model's input changed. */
  private multiNodeShapes = 0;
  private readonly net: NetworkModelCache;

  /**
   * `fit` fits a job's throughput parameters; with `network`, jobs whose points span one node
   * only get their cross-node terms from the cluster network model (goodput/network-model.ts)
   * fitted on every key's profile, instead of from their own one-node fit.
   */
  constructor(
    private readonly fit: (points: readonly ProfilePoint[]) => PerfParams,
    private readonly network = false,
  ) {
    this.net = new NetworkModelCache(fit);
  }

  /**
   * Changes whenever a job's model of `key` should be refitted: its key's profile gained a
   * placement shape, or (with the network model) any key gained a multi-node shape.
   */
  modelVersion(key: string): number {
    return (this.entries.get(key)?.shape_version ?? 0) + (this.network ? this.multiNodeShapes : 0);
  }

  /** The profile's fitter (model/job-fit.ts `fitJob` takes it). */
  get fitter(): (points: readonly ProfilePoint[]) => PerfParams {
    return this.fit;
  }

  /**
   * The cluster network model over every key's profile, for model/job-fit.ts `fitJob`;
   * undefined without the network model. Profiles here only grow, so the count of multi-node
   * shapes is their signature (model/network.ts).
   */
  networkParams(): NetworkParams | undefined {
    if (!this.network) return undefined;
    return this.net.paramsFor(SIM_GPU_TYPE, () => [...this.keeper.all()], String(this.multiNodeShapes));
  }

  /** Whether jobs without a profile take their cross-node terms from the network model. */
  get usesNetworkModel(): boolean {
    return this.network;
  }

  /** The profile of `key`, if any job reported to it. */
  get(key: string): KeyProfile | undefined {
    return this.keeper.get(key, SIM_GPU_TYPE);
  }

  /** Number of profiles (keys) reported to. */
  get size(): number {
    return this.keeper.size;
  }

  /**
   * Throughput parameters fitted on the profile's points alone, refitted lazily when
   * modelVersion changes (new local batches at a known shape refine it at the next new shape).
   */
  profileFit(key: string): PerfParams | undefined {
    const entry = this.entries.get(key);
    const profile = this.keeper.get(key, SIM_GPU_TYPE);
    if (!entry || !profile || profile.points.length === 0) return undefined;
    const version = this.modelVersion(key);
    if (!entry.fit || entry.fit.version !== version) entry.fit = { version, perf: this.fit(profile.points) };
    return entry.fit.perf;
  }

  /**
   * Merges one job's new reports into `key`'s profile; `new_job` counts the job once;
   * `model_parameters`: its model's parameter count, when it reports one.
   */
  report(
    key: string,
    points: readonly ProfilePoint[],
    grad: readonly GradSample[],
    new_job: boolean,
    model_parameters?: number,
  ): void {
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { shape_version: 0, shapes: new Set() }));
    this.keeper.report(key, SIM_GPU_TYPE, { points, grad, new_job, model_parameters });
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
