import { capLocalBatch, splitFixedBatch, type LocalBatch } from '../goodput/batch-split.js';
import type { GoodputModel, PerfParams, ProfilePoint } from '../goodput/types.js';
import type { TraceApplication } from './application.js';
import { roundHalfEven } from './artifact-arithmetic.js';
import type { StepSync } from './nd-table.js';

/** Restart delay (s) of every allocation change: no progress, GPUs still charged (§1.3). */
export const RESTART_DELAY_S = 30;

/**
 * How a job learns and picks its batch when it has no fixed target (Pollux agent emulation).
 * Supplied by the simulator from goodput/; absent for fixed-batch-only runs.
 */
export interface AdaptiveHooks {
  fit(points: readonly ProfilePoint[]): PerfParams;
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
}

/**
 * One job of the trace-driven simulator (pollux-spec §1.3-1.6): progress in B0-equivalent
 * iterations with the AdaScale gain, 30 s restart delay on every allocation change, epoch
 * boundaries with Python half-to-even rounding, online profiling and batch reconfiguration at
 * epoch boundaries and interval ends. Clocks and durations are integer seconds.
 */
export class SimJob {
  readonly name: string;
  readonly app: TraceApplication;
  readonly submit_s: number;
  readonly target_batch_size: number | undefined;
  private readonly hooks: AdaptiveHooks | undefined;
  completion_s: number | null = null;
  current_s = 0;
  rescale_s = 0;
  /** GPUs per node group, in allocation order ([] = no GPUs). */
  placement: readonly number[] = [];
  local_bsz = 0;
  accum_steps = 0;
  progress = 0;
  epoch = 0;
  attained_gpu_s = 0;
  /** null until the first allocation, then the number of re-allocations. */
  restarts: number | null = null;
  /** Last observed true gradient statistics (sigma^2, nu). */
  grad: readonly [number, number] | null = null;
  max_profiled_replicas = 0;
  private readonly profile = new Map<number | string, ProfilePoint>();
  private perf: PerfParams | undefined;
  private perfStale = false;
  private tputCache = new Map<number, StepSync>();

  constructor(config: SimJobConfig) {
    this.name = config.name;
    this.app = config.application;
    this.submit_s = config.submit_s;
    this.target_batch_size = config.target_batch_size;
    this.hooks = config.hooks;
    if (this.target_batch_size === undefined && !this.hooks) throw new Error(`job ${this.name}: adaptive batch size needs goodput hooks`);
  }

  get num_replicas(): number {
    let r = 0;
    for (const g of this.placement) r += g;
    return r;
  }

  /** Total batch in use: r * b * (a + 1). */
  get batch_size(): number {
    return this.num_replicas * this.local_bsz * (this.accum_steps + 1);
  }

  /** Whether any profile point exists (the job then has a fitted model). */
  get profiled(): boolean {
    return this.profile.size > 0;
  }

  /** Fitted throughput parameters over every profiled configuration; refit lazily. */
  perfParams(): PerfParams | undefined {
    if (this.profile.size === 0 || !this.hooks) return undefined;
    if (this.perfStale || !this.perf) {
      this.perf = this.hooks.fit([...this.profile.values()]);
      this.perfStale = false;
    }
    return this.perf;
  }

  /** The job's goodput model as Pollux sees it, once profiled. */
  model(): GoodputModel | undefined {
    const perf = this.perfParams();
    if (!perf || !this.grad) return undefined;
    return { perf, grad: { sqr: this.grad[0], var: this.grad[1] }, limits: this.app.limits };
  }

  /** Applies a new allocation (§1.3): [] frees the GPUs; anything else costs a restart. */
  reallocate(placement: readonly number[]): void {
    this.tputCache = new Map();
    if (placement.length > 0) {
      this.placement = placement;
      this.updateLocalBatch();
      this.rescale_s = RESTART_DELAY_S;
      this.restarts = this.restarts === null ? 0 : this.restarts + 1;
    } else {
      this.placement = [];
      this.local_bsz = 0;
    }
  }

  /** Advances the job by `seconds` (§1.4); `interference` in [0, 1) slows progress. */
  step(seconds: number, interference = 0): void {
    if (this.placement.length === 0) {
      this.current_s += seconds;
      return;
    }
    const r = this.num_replicas;
    const delay = Math.min(this.rescale_s, seconds);
    this.current_s += delay;
    this.attained_gpu_s += delay * r;
    this.rescale_s -= delay;
    seconds -= delay;
    const app = this.app;
    const n = this.placement.length;
    while (seconds > 0 && this.completion_s === null) {
      const b = this.local_bsz;
      const batch = r * b * (this.accum_steps + 1);
      const scale = batch / app.init_batch_size;
      let tput = this.tputCache.get(b);
      if (!tput) this.tputCache.set(b, (tput = app.throughput(this.placement, b)));
      const [step, sync] = tput;
      const [sqr, variance] = app.gradStats(batch, this.epoch);
      const gain = (variance + sqr) / (variance / scale + sqr);
      this.observe(n, r, b, step, sync, sqr, variance);
      const total = step + (step - sync) * this.accum_steps;
      const rate = (gain / total) * (1 - interference);
      const next = app.progressAt(this.epoch + 1);
      if (this.progress + rate * seconds < next) {
        this.progress += rate * seconds;
        this.current_s += seconds;
        this.attained_gpu_s += seconds * r;
        seconds = 0;
      } else {
        this.epoch += 1;
        const delta = roundHalfEven((next - this.progress) / rate);
        if (this.epoch > app.completion_epoch) this.completion_s = this.current_s + delta;
        this.progress = next;
        this.current_s += delta;
        this.attained_gpu_s += delta * r;
        seconds -= delta;
      }
      this.updateLocalBatch();
    }
    this.current_s += seconds;
  }

  private observe(n: number, r: number, b: number, step: number, sync: number, sqr: number, variance: number): void {
    this.grad = [sqr, variance];
    const key = Number.isInteger(b) && b < 65536 ? (n * 1000 + r) * 65536 + b : `${n}:${r}:${b}`;
    if (this.profile.has(key)) return;
    this.profile.set(key, { num_nodes: n, num_replicas: r, local_bsz: b, accum_step_time_s: step - sync, optim_step_time_s: step });
    if (r > this.max_profiled_replicas) this.max_profiled_replicas = r;
    this.perfStale = true;
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
      choice = capLocalBatch(this.app.limits, this.hooks!.chooseBatch(model!, this.placement.length, r), r);
    }
    this.local_bsz = choice.local_bsz;
    this.accum_steps = choice.accum_steps;
  }
}
