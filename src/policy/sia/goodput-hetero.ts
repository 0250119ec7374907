/**
 * The goodput policy on a mixed cluster: Sia's choice of (type, nodes, GPUs) per job over
 * normalized goodputs (each job's model per type: its own measurements there, else its measured
 * type's scaled by the one-GPU throughput ratio), with what the goodput policy knows added:
 * - each job's term is weighted by how soon it could finish (the inverse square root of its
 *   remaining time at its best goodput), so short jobs win contended GPUs (lower average JCT)
 *   while the power-mean objective and the no-allocation penalty keep long jobs running;
 * - a change is discounted by its restart time over the job's remaining work (hysteresis: a job
 *   about to finish does not move for a small gain), on top of Sia's age-based factor; any
 *   change by a further 0.95 (`change_discount`) and a change of GPU type by 0.85 more
 *   (`type_change`);
 * - a job's model on a type includes what the other jobs of its application measured there (its
 *   profile), so a new job starts at a size and batch its profile supports instead of doubling
 *   from one GPU;
 * - optionally, each GPU used costs a little (`gpu_cost`: fewer GPU-hours for a higher JCT);
 * - a job keeps its nodes while its type and size are unchanged (no restart for a re-pack);
 * - a job without a model starts on the type of highest one-GPU throughput for its application.
 * Pure.
 */
import type { GoodputModel } from '../../goodput/types.js';
import type { TypedJob } from '../typed.js';
import type { MilpSolver } from './assignment.js';
import { SIA_DEFAULTS, SiaPolicy, type GoodputMemo, type SiaConfig, type SiaParams } from './sia.js';

/** Knobs of the goodput policy on mixed clusters. */
export interface GoodputHeteroParams extends SiaParams {
  /** Exponent of the remaining-time weight (0: Sia's objective). */
  srpt_power: number;
  /** Objective cost per GPU used, in units of the median job's term (trades JCT for GPU-hours). */
  gpu_cost: number;
  /**
   * How a change is discounted: 0 Sia's re-allocation factor; 1 that times the restart over the
   * remaining work; 2 the restart over the remaining work only.
   */
  restart_aware: number;
  /** 1: a job without a model starts on the type of highest one-GPU throughput; 0: any type (Sia). */
  bootstrap_ratio: number;
  /** 1: a job's model is corrected by its key's measurements where measured; 0: the plain fit. */
  correct_profiles: number;
  /**
   * 1: on a type its key has not run on, a job's model is transferred from its measured type with
   * what other keys measured on both (goodput/type-transfer-model.ts); 0: Sia's ratio rule only.
   */
  transfer_types: number;
  /**
   * Extra discount of a change to another GPU type (1: none). A move between types is where a
   * job is pushed back and forth as short jobs come and go, each time paying its restart.
   */
  type_change: number;
  /** Discount of any change of configuration (1: none): a change must gain over 5% to be made. */
  change_discount: number;
}

/** Defaults measured on Sia's philly and saturn workloads (docs/heterogeneous.md: the change discounts over all 13). */
export const GOODPUT_HETERO_DEFAULTS: GoodputHeteroParams = {
  ...SIA_DEFAULTS,
  srpt_power: 0.5,
  gpu_cost: 0,
  restart_aware: 1,
  bootstrap_ratio: 1,
  correct_profiles: 1,
  transfer_types: 0,
  type_change: 0.85,
  change_discount: 0.95,
};

/** The goodput policy for typed clusters. */
export class GoodputHetero extends SiaPolicy {
  override readonly name = 'goodput';
  readonly uses_profiles = true;
  readonly corrects_profiles: boolean;
  readonly transfers_models: boolean;
  protected override readonly stickyPlacement = true;

  constructor(
    solver: MilpSolver,
    private readonly knobs: GoodputHeteroParams = GOODPUT_HETERO_DEFAULTS,
    goodputs?: GoodputMemo,
  ) {
    super(solver, knobs, goodputs);
    this.corrects_profiles = knobs.correct_profiles === 1;
    this.transfers_models = knobs.transfer_types === 1;
  }

  /**
   * The goodput a change really yields over the rest of the job: its remaining work R at goodput
   * G after a restart of `restart_s` takes restart_s + R / G, i.e. an effective R / (restart_s +
   * R / G) = G / (1 + restart_s G / R). A job about to finish does not move for a small gain.
   * Any change is further discounted by `change_discount`, one to another type by `type_change`.
   */
  protected override changeFactor(job: TypedJob, goodput: number, now_s: number, typeChanged: boolean): number {
    const discount = (typeChanged ? this.knobs.type_change : 1) * this.knobs.change_discount;
    const age = this.knobs.restart_aware === 2 ? 1 : super.changeFactor(job, goodput, now_s, typeChanged);
    if (this.knobs.restart_aware === 0) return age * discount;
    const R = Math.max(job.per_type.remaining_samples, 1);
    return (age * discount) / (1 + (job.per_type.restart_s * goodput) / R);
  }

  /** A job without a model starts where its application's one-GPU throughput is highest. */
  protected override unmodelledGoodput(job: TypedJob, type: string): number {
    return this.knobs.bootstrap_ratio === 1 ? job.per_type.one_gpu_samples_per_s[type]! : 1;
  }

  protected override unmeasuredModel(job: TypedJob, type: string): GoodputModel | undefined {
    return this.transfers_models ? job.per_type.transferred?.(type) : undefined;
  }

  protected override get perGpuCost(): number {
    return this.knobs.gpu_cost;
  }

  protected override jobWeight(job: TypedJob, normalized: readonly number[], _configs: readonly SiaConfig[]): number {
    const modelled = Object.keys(job.per_type.one_gpu_samples_per_s).some((t) => job.per_type.model(t) !== undefined);
    let most = -Infinity;
    // A loop, not Math.max(...row): thousands of rows of tens of configurations a round.
    for (let c = 0; c < normalized.length; c++) most = Math.max(most, normalized[c]!);
    const best = modelled ? most * this.lastMinGoodput : Math.max(...Object.values(job.per_type.one_gpu_samples_per_s));
    // Remaining hours at the best goodput it could get now; unknown models count as one GPU.
    const hours = Math.max(job.per_type.remaining_samples / Math.max(best, 1e-9), 60) / 3600;
    return Math.pow(1 / hours, this.knobs.srpt_power);
  }
}
