/**
 * The one step rule of a simulated job, shared by the homogeneous simulator (sim-job.ts) and the
 * mixed-type one (hetero/hetero-job.ts): a restart delay that charges GPUs without progress,
 * then progress in B0-equivalent iterations at the AdaScale gain over the step time, epoch by
 * epoch (Python half-to-even rounding at each boundary), with every step measured and the batch
 * re-picked at each epoch boundary and interval end. The callers differ only in where a step's
 * time and gradient statistics come from and in a constant rate factor.
 */
import { roundHalfEven } from './artifact-arithmetic.js';
import type { StepSync } from './nd-table.js';

/** The mutable progress state a step advances. */
export interface StepState {
  current_s: number;
  rescale_s: number;
  progress: number;
  epoch: number;
  attained_gpu_s: number;
  completion_s: number | null;
  local_bsz: number;
  accum_steps: number;
}

/** The state every simulated job carries, whichever simulator drives it. */
export abstract class SteppedJob implements StepState {
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

  get num_replicas(): number {
    let r = 0;
    for (const g of this.placement) r += g;
    return r;
  }
}

/** What one job's step reads for its current placement. */
export interface StepRules {
  /** GPUs per node group of the placement ([] = none: time passes, nothing else). */
  placement: readonly number[];
  init_batch_size: number;
  /** Epochs to run: the job completes when it passes the end of this one. */
  completion_epoch: number;
  /** Progress (B0-equivalent iterations) at the start of `epoch`. */
  progressAt(epoch: number): number;
  /** (step, sync) seconds at per-GPU batch `local_bsz` on the placement. */
  throughput(local_bsz: number): StepSync;
  /** True (sigma^2, nu) at total batch `batch` in `epoch`. */
  gradStats(batch: number, epoch: number): readonly [number, number];
  /** Multiplies the progress rate (interference, calibration); 1 leaves it as measured. */
  rate_factor: number;
  /** Records one measured step: nodes, replicas, local batch, step and sync (s), gradient statistics. */
  observe(n: number, r: number, b: number, step: number, sync: number, sqr: number, variance: number): void;
  /** Re-picks (local_bsz, accum_steps) after progress was made. */
  rebatch(): void;
}

/** Advances `job` by `seconds` (integer seconds keep the artifact's arithmetic exact). */
export function advanceJob(job: StepState, seconds: number, rules: StepRules): void {
  const placement = rules.placement;
  if (placement.length === 0) {
    job.current_s += seconds;
    return;
  }
  let r = 0;
  for (const g of placement) r += g;
  const delay = Math.min(job.rescale_s, seconds);
  job.current_s += delay;
  job.attained_gpu_s += delay * r;
  job.rescale_s -= delay;
  seconds -= delay;
  const n = placement.length;
  while (seconds > 0 && job.completion_s === null) {
    const b = job.local_bsz;
    const batch = r * b * (job.accum_steps + 1);
    const scale = batch / rules.init_batch_size;
    const [step, sync] = rules.throughput(b);
    const [sqr, variance] = rules.gradStats(batch, job.epoch);
    const gain = (variance + sqr) / (variance / scale + sqr);
    rules.observe(n, r, b, step, sync, sqr, variance);
    const total = step + (step - sync) * job.accum_steps;
    const rate = (gain / total) * rules.rate_factor;
    const next = rules.progressAt(job.epoch + 1);
    if (job.progress + rate * seconds < next) {
      job.progress += rate * seconds;
      job.current_s += seconds;
      job.attained_gpu_s += seconds * r;
      seconds = 0;
    } else {
      job.epoch += 1;
      // Never past the interval: with integer seconds the rounded time already fits.
      const delta = Math.min(seconds, roundHalfEven((next - job.progress) / rate));
      if (job.epoch > rules.completion_epoch) job.completion_s = job.current_s + delta;
      job.progress = next;
      job.current_s += delta;
      job.attained_gpu_s += delta * r;
      seconds -= delta;
    }
    rules.rebatch();
  }
  job.current_s += seconds;
}
