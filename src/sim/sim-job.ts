import { capLocalBatch, splitFixedBatch, type LocalBatch } from '../goodput/batch-split.js';
import { shapeKey, type KeyProfile } from '../goodput/key-profile.js';
import type { GoodputModel, PerfParams, ProfilePoint } from '../goodput/types.js';
import { judgeAgainstProfile } from '../model/discard.js';
import { fitJob, jobModel, type JobFit } from '../model/job-fit.js';
import { progressBucket } from '../model/progress.js';
import type { TraceApplication } from './application.js';
import { advanceJob, SteppedJob } from './job-step.js';
import type { StepSync } from './nd-table.js';
import type { SimProfileStore } from './profile-store.js';

/** Restart delay (s) of every allocation change: no progress, GPUs still charged (§1.3). */
export const RESTART_DELAY_S = 30;

/**
 * How a job learns and picks its batch when it has no fixed target (Pollux agent emulation).
 * Supplied by the simulator from goodput/; absent for fixed-batch-only runs.
 */
export interface AdaptiveHooks {
  fit(points: readonly ProfilePoint[]): PerfParams;
  /** fitAndCorrect (model/job-fit.ts) over `fit`, where a faster equal one exists (a memo). */
  fitAndCorrect?(points: readonly ProfilePoint[], corrected: boolean): JobFit;
  /** Best (local_bsz, accum_steps) for the placement under `model` (pollux-spec §3.4). */
  chooseBatch(model: GoodputModel, num_nodes: number, num_replicas: number): LocalBatch;
}

/** Static configuration of one simulated job. */
export interface SimJobConfig {
  name: string;
  application: TraceApplication;
  submit_s: number;
  /** Fixed total batch; undefined = adaptive (needs hooks). */
  target_batch_size?: number;
  hooks?: AdaptiveHooks;
  /** The job's profile key and the run's store, for policies that use profiles. */
  profile?: ProfileLink;
}

/** A job's link to its key's profile in the simulator's profile store. */
export interface ProfileLink {
  key: string;
  store: SimProfileStore;
}

/**
 * One job of the trace-driven simulator (pollux-spec §1.3-1.6): progress in B0-equivalent
 * iterations with the AdaScale gain, 30 s restart delay on every allocation change, epoch
 * boundaries with Python half-to-even rounding, online profiling and batch reconfiguration at
 * epoch boundaries and interval ends. Clocks and durations are integer seconds.
 */
export class SimJob extends SteppedJob {
  readonly name: string;
  readonly app: TraceApplication;
  readonly submit_s: number;
  readonly target_batch_size: number | undefined;
  private readonly hooks: AdaptiveHooks | undefined;
  max_profiled_replicas = 0;
  private readonly profile = new Map<number | string, ProfilePoint>();
  private fitted: JobFit | undefined;
  /**
   * The last batch choice and what it was chosen on (the fit object, the gradient statistics and
   * the placement): a job re-picks its batch every interval and epoch, mostly on the same inputs,
   * and the choice (an optimization over batch sizes) was two fifths of a day's simulation at
   * 16,384 GPUs (issue #49). Exact: the choice is a pure function of those inputs.
   */
  private lastChoice: { fit: JobFit; sqr: number; var: number; n: number; r: number; choice: LocalBatch } | undefined;
  private perfStale = false;
  private tputCache = new Map<number, StepSync>();
  private readonly link: ProfileLink | undefined;
  /** Set once the job's own measurements disagreed with its key's profile. */
  private discarded = false;
  /** Set once the job's measurements were judged against its key's profile and kept it. */
  private judged = false;
  /** Whether this job's reports are in its key's profile. */
  private contributed = false;
  /** Shapes of the points this job reported to its key's profile (not judged against: model/discard.ts). */
  private readonly reportedShapes = new Set<string>();
  /** Own points not yet reported to the profile. */
  private pending: ProfilePoint[] = [];
  private reportedBucket = -1;
  /** When the allocation in force started (s), while the job holds one. */
  allocated_at_s: number | undefined;
  /** Store model version (and whether the profile was used) `perf` was fitted with. */
  private perfVersion = -1;

  constructor(config: SimJobConfig) {
    super();
    this.name = config.name;
    this.app = config.application;
    this.submit_s = config.submit_s;
    this.target_batch_size = config.target_batch_size;
    this.hooks = config.hooks;
    this.link = config.hooks ? config.profile : undefined;
    if (this.target_batch_size === undefined && !this.hooks)
      throw new Error(`job ${this.name}: adaptive batch size needs goodput hooks`);
  }

  /** Total batch in use: r * b * (a + 1). */
  get batch_size(): number {
    return this.num_replicas * this.local_bsz * (this.accum_steps + 1);
  }

  /** Whether any profile point exists, own or of the key's profile (the job then has a fitted model). */
  get profiled(): boolean {
    return this.profile.size > 0 || this.sharedProfile() !== undefined;
  }

  /** The job's profile key, when the run keeps profiles. */
  get profileKey(): string | undefined {
    return this.link?.key;
  }

  /** Whether the model includes what other jobs of the key measured. */
  get modelFromProfile(): boolean {
    return this.sharedProfile() !== undefined;
  }

  /** Whether the key's profile was discarded for this job (its measurements disagreed). */
  get profileDiscarded(): boolean {
    return this.discarded;
  }

  /** Largest replica count measured: the job's own, or its key's profile's while in use. */
  get measuredReplicas(): number {
    return Math.max(this.max_profiled_replicas, this.sharedProfile()?.max_measured_replicas ?? 0);
  }

  /**
   * Fitted throughput parameters over every profiled configuration, own and (while in use) the
   * key's profile's at configurations the job has not measured (model/job-fit.ts `fitJob`);
   * refit lazily, and on a profile only when the store's model version changes (a new placement
   * shape; a refit per new local batch would cost a fit per job and round).
   */
  perfParams(): PerfParams | undefined {
    return this.currentFit()?.perf;
  }

  private currentFit(): JobFit | undefined {
    const hooks = this.hooks;
    if (!hooks) return undefined;
    const link = this.link;
    const shared = this.sharedProfile();
    const version = link ? 2 * link.store.modelVersion(link.key) + (shared ? 1 : 0) : 0;
    if (this.perfStale || !this.fitted || this.perfVersion !== version) {
      const own = [...this.profile.values()];
      this.fitted = fitJob({
        own,
        ...(shared ? { profile: shared, profile_perf: link!.store.profileFit(link!.key) } : {}),
        ...(link?.store.usesNetworkModel ? { network: () => link.store.networkParams() } : {}),
        ...(this.app.model_parameters !== undefined ? { model_parameters: this.app.model_parameters } : {}),
        corrected: link !== undefined,
        fit: hooks.fit,
        ...(hooks.fitAndCorrect ? { fitAndCorrect: (p, c) => hooks.fitAndCorrect!(p, c) } : {}),
      });
      this.perfVersion = version;
      this.perfStale = false;
    }
    return this.fitted;
  }

  /**
   * The job's goodput model as Pollux sees it, once profiled (model/job-fit.ts `jobModel`);
   * before its own first gradient measurement, with its key's gradient statistics at the start
   * of training.
   */
  model(): GoodputModel | undefined {
    const fit = this.currentFit();
    if (!fit) return undefined;
    const shared = this.sharedProfile();
    return jobModel({
      fit,
      grad: this.grad ? { sqr: this.grad[0], var: this.grad[1] } : null,
      ...(shared ? { profile: shared } : {}),
      corrected: this.link !== undefined,
      limits: this.app.limits,
    });
  }

  /**
   * Hands the measurements made since the last call to the key's profile (the simulator calls
   * it once per round, as the control plane refits): first judges the job's points against the
   * profile until they are comparable (model/discard.ts); then new profile points and the
   * gradient statistics, at most one sample per progress bucket (model/progress.ts). A job whose
   * profile was discarded reports nothing.
   */
  reportProfile(): void {
    const link = this.link;
    if (!link || this.discarded) return;
    if (!this.judged && this.pending.length > 0) {
      const shared = this.sharedProfile();
      const perf = shared ? link.store.profileFit(link.key) : undefined;
      const verdict =
        shared && perf
          ? judgeAgainstProfile(perf, shared, [...this.profile.values()], this.reportedShapes).verdict
          : 'unjudged';
      if (verdict === 'discard') {
        this.discarded = true;
        this.pending = [];
        return;
      }
      if (verdict === 'keep') this.judged = true;
    }
    const bucket = progressBucket(this.progress / this.app.target_progress);
    const grad =
      this.grad && bucket !== this.reportedBucket ? [{ progress: bucket, sqr: this.grad[0], var: this.grad[1] }] : [];
    if (this.pending.length === 0 && grad.length === 0) return;
    link.store.report(link.key, this.pending, grad, !this.contributed, this.app.model_parameters);
    this.contributed = true;
    for (const p of this.pending) this.reportedShapes.add(shapeKey(p));
    this.pending = [];
    if (grad.length > 0) this.reportedBucket = bucket;
  }

  /** The key's profile while it holds other jobs' measurements and agrees with this job's. */
  private sharedProfile(): KeyProfile | undefined {
    if (!this.link || this.discarded) return undefined;
    const p = this.link.store.get(this.link.key);
    return p && p.points.length > 0 && p.jobs > (this.contributed ? 1 : 0) ? p : undefined;
  }

  /**
   * Applies a new allocation (§1.3) at time `now_s`: [] frees the GPUs; anything else costs a
   * restart.
   */
  reallocate(placement: readonly number[], now_s = this.current_s): void {
    this.tputCache = new Map();
    if (placement.length > 0) {
      this.allocated_at_s = now_s;
      this.placement = placement;
      this.updateLocalBatch();
      this.rescale_s = RESTART_DELAY_S;
      this.restarts = this.restarts === null ? 0 : this.restarts + 1;
    } else {
      this.allocated_at_s = undefined;
      this.placement = [];
      this.local_bsz = 0;
    }
  }

  /** Advances the job by `seconds` (§1.4, job-step.ts); `interference` in [0, 1) slows progress. */
  step(seconds: number, interference = 0): void {
    const app = this.app;
    const placement = this.placement;
    // What advanceJob does without a placement, without building its rules: a day at 16,384 GPUs
    // steps 122,880 jobs a round, nearly all waiting to arrive or done (bench:scale).
    if (placement.length === 0) {
      this.current_s += seconds;
      return;
    }
    advanceJob(this, seconds, {
      placement,
      init_batch_size: app.init_batch_size,
      completion_epoch: app.completion_epoch,
      progressAt: (epoch) => app.progressAt(epoch),
      throughput: (b) => {
        let tput = this.tputCache.get(b);
        if (!tput) this.tputCache.set(b, (tput = app.throughput(placement, b)));
        return tput;
      },
      gradStats: (batch, epoch) => app.gradStats(batch, epoch),
      rate_factor: 1 - interference,
      observe: (n, r, b, step, sync, sqr, variance) => this.observe(n, r, b, step, sync, sqr, variance),
      rebatch: () => this.updateLocalBatch(),
    });
  }

  /**
   * Records one measured step: placement (n nodes, r replicas), local batch b, step and sync
   * time (s), and the true gradient statistics. Public so that a test can feed the same
   * measurements to the simulator and the control plane (model/parity.test.ts).
   */
  observe(n: number, r: number, b: number, step: number, sync: number, sqr: number, variance: number): void {
    this.grad = [sqr, variance];
    const key = Number.isInteger(b) && b < 65536 ? (n * 1000 + r) * 65536 + b : `${n}:${r}:${b}`;
    if (this.profile.has(key)) return;
    const point: ProfilePoint = {
      num_nodes: n,
      num_replicas: r,
      local_bsz: b,
      accum_step_time_s: step - sync,
      optim_step_time_s: step,
    };
    this.profile.set(key, point);
    if (r > this.max_profiled_replicas) this.max_profiled_replicas = r;
    this.perfStale = true;
    if (this.link) this.pending.push(point);
  }

  /** Batch configuration for the current placement (§1.6). */
  private updateLocalBatch(): void {
    const r = this.num_replicas;
    if (r === 0) return;
    let target = this.target_batch_size;
    const model = target === undefined ? this.model() : undefined;
    if (target === undefined && !model) target = Math.max(this.app.init_batch_size, this.app.min_local_bsz * r);
    let choice: LocalBatch;
    if (target !== undefined) {
      choice = splitFixedBatch(this.app.limits, target, r);
    } else {
      choice = this.chosenBefore(r) ?? this.choose(model!, r);
    }
    this.local_bsz = choice.local_bsz;
    this.accum_steps = choice.accum_steps;
  }

  /** The last choice, when the fit (just refreshed by model()), the gradient statistics and the placement are those it was made on. */
  private chosenBefore(r: number): LocalBatch | undefined {
    const last = this.lastChoice;
    const grad = this.grad;
    if (!last || !grad || last.fit !== this.fitted) return undefined;
    const same = last.sqr === grad[0] && last.var === grad[1] && last.n === this.placement.length && last.r === r;
    return same ? last.choice : undefined;
  }

  private choose(model: GoodputModel, r: number): LocalBatch {
    const n = this.placement.length;
    const choice = capLocalBatch(this.app.limits, this.hooks!.chooseBatch(model, n, r), r);
    const grad = this.grad;
    // Without its own gradient statistics the model reads its key's profile's, which may change.
    this.lastChoice = grad && this.fitted ? { fit: this.fitted, sqr: grad[0], var: grad[1], n, r, choice } : undefined;
    return choice;
  }
}
