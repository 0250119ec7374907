/**
 * Profiles per (application, GPU type) shared by the jobs of a mixed-cluster run, for policies
 * that use profiles (as the control plane keeps them per profile key and type): every job's
 * measurements on a type, one throughput fit per (application, type) refit when a new
 * configuration is measured, and the gradient statistics the application's jobs measured at the
 * start of training.
 */
import { fitPerfParams } from '../../goodput/fit.js';
import { transferredPerf, type TransferredPerf } from '../../goodput/type-transfer-model.js';
import type { Shape } from '../../goodput/type-transfer.js';
import type { ProfilePoint } from '../../goodput/types.js';
import { fitAndCorrect, type JobFit } from '../../model/job-fit.js';

/** The run's shared profiles. */
export class KeyProfiles {
  private readonly points = new Map<string, Map<number, ProfilePoint>>();
  private readonly fits = new Map<string, JobFit>();
  private readonly startGrad = new Map<string, readonly [number, number]>();
  private readonly transfers = new Map<string, { signature: string; result: TransferredPerf | undefined }>();

  /** @param corrected whether a model is corrected by the measurements where measured. */
  constructor(readonly corrected = true) {}

  /** Records one measured configuration (`id` identifies its nodes, replicas and batch). */
  add(app: string, type: string, id: number, point: ProfilePoint): void {
    const key = `${app}\u0000${type}`;
    let m = this.points.get(key);
    if (!m) this.points.set(key, (m = new Map()));
    if (m.has(id)) return;
    m.set(id, point);
    this.fits.delete(key);
  }

  /**
   * The fit over every job's measurements of `app` on `type` (in the order they were measured),
   * if any, corrected by them where measured when `corrected` (model/job-fit.ts `fitAndCorrect`,
   * the control plane's rule).
   */
  fit(app: string, type: string): JobFit | undefined {
    const key = `${app}\u0000${type}`;
    const m = this.points.get(key);
    if (!m || m.size === 0) return undefined;
    let fit = this.fits.get(key);
    if (!fit) this.fits.set(key, (fit = fitAndCorrect([...m.values()], fitPerfParams, this.corrected)));
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
    const of = (a: string, t: string) => this.points.get(`${a}\u0000${t}`);
    const grown = (n: number) => Math.floor(Math.log2(n));
    const all = [...new Set([...this.points.keys()].map((k) => k.split('\u0000')[0]!))].sort();
    for (const app of new Set(apps)) {
      for (const [target, targetShapes] of shapes) {
        const cacheKey = `${app}\u0000${target}`;
        if (this.fit(app, target)) {
          this.transfers.delete(cacheKey);
          continue;
        }
        let reference: string | undefined;
        let most = 0;
        for (const [key, m] of this.points) {
          const [a, t] = key.split('\u0000') as [string, string];
          if (a === app && t !== target && m.size > most) [reference, most] = [t, m.size];
        }
        if (reference === undefined) continue;
        const ref = reference;
        const others = all.filter((a) => a !== app && (of(a, ref)?.size ?? 0) > 0 && (of(a, target)?.size ?? 0) > 0);
        const signature = [
          ref,
          grown(most),
          ...others.map((a) => `${a}:${grown(of(a, ref)!.size)}:${grown(of(a, target)!.size)}`),
        ].join(' ');
        if (this.transfers.get(cacheKey)?.signature === signature) continue;
        const own = [...of(app, ref)!.values()];
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
              others.map((a) => ({ reference: [...of(a, ref)!.values()], target: [...of(a, target)!.values()] })),
              at,
            )
          : undefined;
        this.transfers.set(cacheKey, { signature, result });
      }
    }
  }

  /** Largest replica count measured for `app` on `type` by any job. */
  maxReplicas(app: string, type: string): number {
    let max = 0;
    for (const p of this.points.get(`${app}\u0000${type}`)?.values() ?? []) max = Math.max(max, p.num_replicas);
    return max;
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
