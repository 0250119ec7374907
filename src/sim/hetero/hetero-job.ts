/**
 * One job of the mixed-type simulator: runs on one GPU type at a time, learns a throughput model
 * per type from its own measurements there (or one pooled model, for type-unaware policies),
 * picks its batch from that model, and pays its application's restart time on every allocation
 * change. Progress follows the Pollux simulator's rule (AdaScale gain over step time), times the
 * application's calibration.
 */
import { capLocalBatch, splitFixedBatch, type LocalBatch } from '../../goodput/batch-split.js';
import { fitPerfParams } from '../../goodput/fit.js';
import { optimizeBatch } from '../../goodput/optimize.js';
import type { GoodputModel, ProfilePoint } from '../../goodput/types.js';
import { fitAndCorrect, jobModel, type JobFit } from '../../model/job-fit.js';
import { advanceJob, SteppedJob } from '../job-step.js';
import type { KeyProfiles } from './key-profiles.js';
import { typeLimits, type HeteroApplication } from './typed-app.js';

/** Gradient statistics (sigma^2, nu). */
type Grad = readonly [number, number];

/** Profile key of the pooled (type-unaware) model. */
const POOLED = '*';

/** Configuration of one mixed-type job. */
export interface HeteroJobConfig {
  name: string;
  app: HeteroApplication;
  submit_s: number;
  /** Fixed total batch (ncf), else adaptive. */
  fixed_batch_size?: number;
  /** One model over every type's measurements (a type-unaware scheduler's job). */
  pooled: boolean;
  /** The run's shared profiles, for policies that use them (never with `pooled`). */
  profiles?: KeyProfiles;
}

/** A simulated job on a mixed cluster. */
export class HeteroJob extends SteppedJob {
  readonly name: string;
  readonly app: HeteroApplication;
  readonly submit_s: number;
  readonly fixed_batch_size: number | undefined;
  readonly pooled: boolean;
  type: string | null = null;
  private readonly profiles = new Map<string, Map<number, ProfilePoint>>();
  private readonly fits = new Map<string, JobFit>();
  private readonly shared: KeyProfiles | undefined;

  constructor(config: HeteroJobConfig) {
    super();
    this.name = config.name;
    this.app = config.app;
    this.submit_s = config.submit_s;
    this.fixed_batch_size = config.fixed_batch_size;
    this.pooled = config.pooled;
    this.shared = config.pooled ? undefined : config.profiles;
  }

  /** Largest replica count measured on `type` (pooled: on any type). */
  maxProfiled(type: string): number {
    const p = this.profiles.get(this.pooled ? POOLED : type);
    let max = this.shared ? this.shared.maxReplicas(this.app.name, type) : 0;
    if (p) for (const pt of p.values()) max = Math.max(max, pt.num_replicas);
    return max;
  }

  /**
   * The job's goodput model on `type` from its own measurements there (pooled: from all of them,
   * with the limits of `type`); undefined before it has run there and measured its gradient.
   */
  model(type: string): GoodputModel | undefined {
    if (this.shared) {
      // Every own measurement is in the shared profile: its fit is the job's and its key's.
      const grad = this.grad ?? this.shared.grad(this.app.name);
      return this.assemble(this.shared.fit(this.app.name, type), grad, type);
    }
    const key = this.pooled ? POOLED : type;
    const points = this.profiles.get(key);
    if (!points || points.size === 0 || !this.grad) return undefined;
    let fit = this.fits.get(key);
    // Without shared profiles (the Sia artifact's baselines, sia and pollux; goodput with profiles off):
    // the artifact's per-job fit, over the job's points in the order measured (model/job-fit.ts `FitOrder`).
    if (!fit) this.fits.set(key, (fit = fitAndCorrect([...points.values()], fitPerfParams, false, 'measured')));
    return this.assemble(fit, this.grad, type);
  }

  /** The goodput model of `fit` and `grad` on `type` (model/job-fit.ts `jobModel`, the control plane's). */
  private assemble(fit: JobFit | undefined, grad: Grad | undefined, type: string): GoodputModel | undefined {
    if (!fit || !grad) return undefined;
    const limits = typeLimits(this.app, type);
    return jobModel({ fit, grad: { sqr: grad[0], var: grad[1] }, corrected: fit.correction !== null, limits });
  }

  /**
   * The job's model on `type`, where neither it nor its key has measured, transferred from the
   * key's measured type (KeyProfiles.transferred); undefined without shared profiles, gradient
   * statistics or anything to transfer from.
   */
  transferred(type: string): GoodputModel | undefined {
    const shared = this.shared;
    const grad = this.grad ?? shared?.grad(this.app.name);
    if (!shared || !grad || shared.fit(this.app.name, type)) return undefined;
    const t = shared.transferred(this.app.name, type);
    return t
      ? this.assemble({ perf: t.perf, correction: shared.corrected ? t.correction : null }, grad, type)
      : undefined;
  }

  /** Training left, in B0-equivalent samples. */
  get remaining_samples(): number {
    return Math.max(0, this.app.base.target_progress - this.progress) * this.app.base.init_batch_size;
  }

  /** Applies a new allocation at `now_s`: [] frees the GPUs; anything else costs a restart. */
  reallocate(type: string | null, placement: readonly number[]): void {
    if (placement.length === 0 || type === null) {
      this.placement = [];
      this.local_bsz = 0;
      return;
    }
    this.type = type;
    this.placement = placement;
    this.updateBatch();
    this.rescale_s = this.app.rescale_s;
    this.restarts = this.restarts === null ? 0 : this.restarts + 1;
  }

  /** Advances the job by `seconds` (job-step.ts), at its application's calibrated rate. */
  step(seconds: number): void {
    if (this.completion_s !== null) return;
    const type = this.type;
    const base = this.app.base;
    const tput = type === null ? undefined : this.app.byType.get(type)!;
    const placement = tput ? this.placement : [];
    advanceJob(this, seconds, {
      placement,
      init_batch_size: base.init_batch_size,
      completion_epoch: base.completion_epoch,
      progressAt: (epoch) => base.progressAt(epoch),
      throughput: (b) => tput!.throughput(placement, b),
      // Statistics are measured over the validation files' batch range only.
      gradStats: (batch, epoch) =>
        base.gradStats(Math.min(Math.max(batch, base.init_batch_size), base.max_batch_size), epoch),
      rate_factor: this.app.calibration,
      observe: (n, r, b, step, sync, sqr, variance) => this.observe(n, r, b, step, sync, sqr, variance),
      rebatch: () => this.updateBatch(),
    });
  }

  private observe(n: number, r: number, b: number, step: number, sync: number, sqr: number, variance: number): void {
    this.grad = [sqr, variance];
    const key = this.pooled ? POOLED : this.type!;
    let points = this.profiles.get(key);
    if (!points) this.profiles.set(key, (points = new Map()));
    const id = (n * 1000 + r) * 65536 + b;
    if (points.has(id)) return;
    const point = {
      num_nodes: n,
      num_replicas: r,
      local_bsz: b,
      accum_step_time_s: step - sync,
      optim_step_time_s: step,
    };
    points.set(id, point);
    this.fits.delete(key);
    if (this.shared) {
      this.shared.add(this.app.name, key, point);
      if (this.epoch === 0) this.shared.setStartGrad(this.app.name, this.grad);
    }
  }

  private updateBatch(): void {
    const r = this.num_replicas;
    if (r === 0 || this.type === null) return;
    const limits = typeLimits(this.app, this.type);
    const tput = this.app.byType.get(this.type)!;
    const placementLimits = {
      ...limits,
      max_local_bsz: Math.min(limits.max_local_bsz, tput.maxLocalBsz(this.placement)),
    };
    let choice: LocalBatch;
    const model = this.fixed_batch_size === undefined ? this.model(this.type) : undefined;
    if (this.fixed_batch_size !== undefined || !model) {
      const target = this.fixed_batch_size ?? Math.max(limits.init_batch_size, limits.min_local_bsz * r);
      choice = splitFixedBatch(placementLimits, target, r);
    } else {
      const c = optimizeBatch({ ...model, limits: placementLimits }, this.placement.length, r, limits.max_batch_size);
      choice = capLocalBatch(placementLimits, { local_bsz: c.local_bsz, accum_steps: c.accum_steps }, r);
    }
    this.local_bsz = Math.max(1, choice.local_bsz);
    this.accum_steps = choice.accum_steps;
  }
}
