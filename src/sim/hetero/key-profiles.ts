/**
 * Profiles per (application, GPU type) shared by the jobs of a mixed-cluster run, for policies
 * that use profiles (as the control plane keeps them per profile key and type): every job's
 * measurements on a type, one throughput fit per (application, type) refit when a new
 * configuration is measured, and the gradient statistics the application's jobs measured at the
 * start of training.
 */
import { fitPerfParams } from '../../goodput/fit.js';
import { stepCorrection } from '../../goodput/step-correction.js';
import type { PerfParams, ProfilePoint, StepCorrection } from '../../goodput/types.js';

/** The run's shared profiles. */
export class KeyProfiles {
  private readonly points = new Map<string, Map<number, ProfilePoint>>();
  private readonly fits = new Map<string, { perf: PerfParams; correction: StepCorrection }>();
  private readonly startGrad = new Map<string, readonly [number, number]>();

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
   * The fit over every job's measurements of `app` on `type`, if any, and its correction by
   * them where measured (goodput/step-correction.ts), as the control plane corrects a key's fit.
   */
  fit(app: string, type: string): { perf: PerfParams; correction: StepCorrection } | undefined {
    const key = `${app}\u0000${type}`;
    const m = this.points.get(key);
    if (!m || m.size === 0) return undefined;
    let fit = this.fits.get(key);
    if (!fit) {
      const points = [...m.values()];
      const perf = fitPerfParams(points);
      this.fits.set(key, (fit = { perf, correction: stepCorrection(perf, points) }));
    }
    return fit;
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
