/**
 * The goodput policy on a mixed cluster: Sia's choice of (type, nodes, GPUs) per job over
 * normalized goodputs (each job's model per type: its own measurements there, else its measured
 * type's scaled by the one-GPU throughput ratio), with each job's term weighted by how soon it
 * could finish: the inverse square root of its remaining time at its best one-configuration
 * goodput (a job without a model yet: at the one-GPU throughput of its fastest type). Short jobs win contended GPUs (lower average JCT);
 * the power-mean objective and the no-allocation penalty keep long jobs running. Pure.
 */
import type { TypedJob } from '../typed.js';
import type { MilpSolver } from './assignment.js';
import { SIA_DEFAULTS, SiaPolicy, type SiaConfig, type SiaParams } from './sia.js';

/** Knobs of the goodput policy on mixed clusters. */
export interface GoodputHeteroParams extends SiaParams {
  /** Exponent of the remaining-time weight (0: Sia's objective). */
  srpt_power: number;
}

export const GOODPUT_HETERO_DEFAULTS: GoodputHeteroParams = { ...SIA_DEFAULTS, srpt_power: 0.5 };

/** The goodput policy for typed clusters. */
export class GoodputHetero extends SiaPolicy {
  override readonly name = 'goodput';
  protected override readonly stickyPlacement = true;

  constructor(
    solver: MilpSolver,
    private readonly knobs: GoodputHeteroParams = GOODPUT_HETERO_DEFAULTS,
  ) {
    super(solver, knobs);
  }

  protected override jobWeight(job: TypedJob, normalized: readonly number[], _configs: readonly SiaConfig[]): number {
    const modelled = Object.keys(job.one_gpu_samples_per_s).some((t) => job.model(t) !== undefined);
    const best = modelled ? Math.max(...normalized) * this.lastMinGoodput : Math.max(...Object.values(job.one_gpu_samples_per_s));
    // Remaining hours at the best goodput it could get now; unknown models count as one GPU.
    const hours = Math.max(job.remaining_samples / Math.max(best, 1e-9), 60) / 3600;
    return Math.pow(1 / hours, this.knobs.srpt_power);
  }
}
