/**
 * Profiles per (application, GPU type) shared by the jobs of a mixed-cluster run, for policies
 * that use profiles (as the control plane keeps them per profile key and type): every job's
 * measurements on a type, kept by model/profile-keeper.ts (the control plane's rule), one
 * throughput fit per (application, type) refit when a new configuration is measured, and the
 * gradient statistics the application's jobs measured at the start of training.
 */
import { fitPerfParams } from '../../goodput/fit.js';
import { transferredPerf, type TransferredPerf } from '../../goodput/type-transfer-model.js';
import type { Shape } from '../../goodput/type-transfer.js';
import type { ProfilePoint } from '../../goodput/types.js';
import { fitAndCorrect, type JobFit } from '../../model/job-fit.js';
import { ProfileKeeper } from '../../model/profile-keeper.js';

/** The run's shared profiles. */
export class KeyProfiles {
  private readonly keeper = new ProfileKeeper();
  private readonly fits = new Map<string, JobFit>();
  private readonly startGrad = new Map<string, readonly [number, number]>();
  private readonly transfers = new Map<string, { signature: string; result: TransferredPerf | undefined }>();

  /** @param corrected whether a model is corrected by the measurements where measured. */
  constructor(readonly corrected = true) {}

  /** Records one measured configuration; a new configuration makes the next `fit` refit. */
  add(app: string, type: string, point: ProfilePoint): void {
    const { added } = this.keeper.report(app, type, { points: [point], grad: [], new_job: false });
    if (added.length > 0) this.fits.delete(`${app}\u0000${type}`);
  }

  /** The points of `app` on `type`, one per configuration, in configuration order (empty: none). */
  private of(app: string, type: string): readonly ProfilePoint[] {
    return this.keeper.get(app, type)?.points ?? [];
  }

  /**
   * The fit over every job's measurements of `app` on `type`, if any, corrected by them where
   * measured when `corrected` (model/job-fit.ts `fitAndCorrect`, the control plane's rule).
   */
  fit(app: string, type: string): JobFit | undefined {
    const key = `${app}\u0000${type}`;
    const points = this.of(app, type);
    if (points.length === 0) return undefined;
    let fit = this.fits.get(key);
    if (!fit) this.fits.set(key, (fit = fitAndCorrect(points, fitPerfParams, this.corrected)));
    return fit;
  }

  /**
   * `app`'s model on `target` from the last {@link refreshTransfers}; undefined where it was not
   * transferred (a job of it measured there, or nothing to transfer from).
   */
  transferred(app: string, target: string): TransferredPerf | undefined {
    return this.transfers.get(`${app}\u0000${target}`)?.result;
  }

  /**
   * Brings up to date the model of each application of `apps` on each type of `shapes` where no
   * job of it has measured: transferred from its type with the most points
   * (goodput/type-transfer-model.ts) with the other applications' points on both types, its
   * one-GPU compute there at Sia's one-GPU ratio (`one_gpu_samples_per_s(app, type)` is Sia's
   * bootstrap rate), fitted at the type's configurations and the batches it measured.
   * Run when profiles change, outside the policy's decision, as the control plane refits at
   * report time; refitted only when one of the point sets it reads has doubled (a transfer costs
   * tens of ms).
   */
  refreshTransfers(
    apps: Iterable<string>,
    shapes: ReadonlyMap<string, readonly Shape[]>,
    one_gpu_samples_per_s: (app: string, type: string) => number,
  ): void {
    const size = (a: string, t: string) => this.of(a, t).length;
    const grown = (n: number) => Math.floor(Math.log2(n));
    const all = [...new Set([...this.keeper.all()].map((p) => p.key))].sort();
    for (const app of new Set(apps)) {
      for (const [target, targetShapes] of shapes) {
        const cacheKey = `${app}\u0000${target}`;
        if (this.fit(app, target)) {
          this.transfers.delete(cacheKey);
          continue;
        }
        let reference: string | undefined;
        let most = 0;
        for (const p of this.keeper.all()) {
          if (p.key === app && p.gpu_type !== target && p.points.length > most)
            [reference, most] = [p.gpu_type, p.points.length];
        }
        if (reference === undefined) continue;
        const ref = reference;
        const others = all.filter((a) => a !== app && size(a, ref) > 0 && size(a, target) > 0);
        const signature = [
          ref,
          grown(most),
          ...others.map((a) => `${a}:${grown(size(a, ref))}:${grown(size(a, target))}`),
        ].join(' ');
        if (this.transfers.get(cacheKey)?.signature === signature) continue;
        const own = this.of(app, ref);
        const speedup = one_gpu_samples_per_s(app, target) / one_gpu_samples_per_s(app, ref);
        // Its one-GPU compute on the target: its reference compute at Sia's one-GPU ratio.
        const oneGpu = own
          .filter((p) => p.num_replicas === 1)
          .map((p) => ({
            ...p,
            accum_step_time_s: p.accum_step_time_s / speedup,
            optim_step_time_s: p.accum_step_time_s / speedup,
          }));
        const batches = [...new Set(own.map((p) => p.local_bsz))];
        const at = targetShapes.flatMap((s) => batches.map((local_bsz) => ({ ...s, local_bsz })));
        // Without multi-GPU points of its own there is no network to transfer: the ratio rule stays.
        const result = own.some((p) => p.num_replicas > 1)
          ? transferredPerf(
              own,
              oneGpu,
              others.map((a) => ({ reference: this.of(a, ref), target: this.of(a, target) })),
              at,
            )
          : undefined;
        this.transfers.set(cacheKey, { signature, result });
      }
    }
  }

  /** Largest replica count measured for `app` on `type` by any job. */
  maxReplicas(app: string, type: string): number {
    return this.keeper.get(app, type)?.max_measured_replicas ?? 0;
  }

  /** Gradient statistics (sigma^2, nu) a job of `app` measured in its first epoch, if any. */
  grad(app: string): readonly [number, number] | undefined {
    return this.startGrad.get(app);
  }

  /** Keeps the first first-epoch gradient statistics reported for `app`. */
  setStartGrad(app: string, grad: readonly [number, number]): void {
    if (!this.startGrad.has(app)) this.startGrad.set(app, grad);
  }
}
