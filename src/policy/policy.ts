import type { Allocation, ClusterSnapshot } from '../core/cluster.js';
import type { MemoBank } from '../goodput/memo-bank.js';
import type { MilpSolver } from './sia/assignment.js';

/**
 * Why a job got fewer GPUs than it asked for, so "why is my job not running?" always has an
 * answer. `code` is stable; `message` is for people.
 */
export interface Rejection {
  code: string;
  message: string;
}

/** A policy's answer for one round. */
export interface PolicyDecision {
  /** New allocation for every job that should hold GPUs; jobs absent here get none. */
  allocations: Record<string, Allocation>;
  /** Optional reasons for jobs left without (enough) GPUs. */
  rejections?: Record<string, Rejection>;
  /** Optional: how the decision was made and how far it may be from the best one. */
  diagnostics?: DecisionDiagnostics;
  /**
   * Optional words, by job id, for why a job's allocation changed this round (the shares layer:
   * "shrank 4 -> 2 to return 2 a100 to team vision's quota"); the control plane puts them in the
   * job's event.
   */
  notes?: Record<string, string>;
  /**
   * Optional, by job id, for a job resized between two positive sizes: the predicted speedup of
   * its new size over its current one that the decision used, with its 80% interval (an event
   * states it as the decision's claim, docs/policy.md "Decisions that need the gain to be sure").
   */
  gains?: Record<string, GainClaim>;
}

/**
 * How far a decision is from the best one, where the policy can tell (issue #49): its objective
 * against a bound no decision can beat (a relaxation's optimum). Invariant: 0 <= gap; a gap of 0
 * means the decision is optimal for the policy's objective.
 */
export interface DecisionDiagnostics {
  /** How it was decided, e.g. `exact` (integer program) or `relaxed` (prices and greedy placement). */
  method: string;
  /** The decision's objective (larger is better), in the policy's own units. */
  objective?: number;
  /** A bound no decision of this round can beat (same units). */
  bound?: number;
  /** (bound - objective) / |bound|, clamped at 0; absent without a bound. */
  gap?: number;
}

/** A predicted gain (ratio, new over current) and its 80% interval [lo, hi]; lo <= gain <= hi. */
export interface GainClaim {
  gain: number;
  lo: number;
  hi: number;
}

/**
 * A scheduling policy. Contract (checked by the policy conformance suite):
 * - deterministic for the same snapshot sequence and seed; reads no clock, does no I/O;
 * - never over-commits a node, never exceeds a job's max_replicas, never gives a job fewer than
 *   its min_replicas unless it gives it none;
 * - keeps non-preemptible jobs' current allocations unchanged.
 * A policy may keep state across rounds (queues, warm starts); create one instance per cluster.
 */
export interface Policy {
  readonly name: string;
  /**
   * Whether the policy wants jobs' models started from their profile key's profile (the
   * simulator then keeps a profile store and fills PolicyJob.profile_key and
   * model_from_profile). Absent or false: every job's model is its own reports only.
   */
  readonly uses_profiles?: boolean;
  /**
   * With uses_profiles: whether a job with no profile to start from (the first of its key) gets
   * its cross-node step time from the cluster network model (goodput/network-model.ts) while it
   * has run on one node only. Absent or false: from its own one-node fit.
   */
  readonly uses_network_model?: boolean;
  /**
   * On several GPU types: whether a job keeps one model over all types (type-unaware), which the
   * mixed-type simulator then fits from every type's measurements. Absent: one model per type.
   */
  readonly pooled_models?: boolean;
  /**
   * With uses_profiles, on several GPU types: whether a job's model is corrected by its key's
   * measurements where measured (goodput/step-correction.ts), as the control plane's is. Absent: corrected.
   */
  readonly corrects_profiles?: boolean;
  /** Whether it reads `JobTypes.transferred` (so the mixed-type simulator keeps transfers). Absent: no. */
  readonly transfers_models?: boolean;
  decide(snapshot: ClusterSnapshot): PolicyDecision;
}

/** Value of one tunable knob of a policy. */
export type PolicyParamValue = number | boolean;

/** Options every policy factory accepts. */
export interface PolicyOptions {
  /** Seed of the policy's random generator (ignored by deterministic policies). */
  seed: number;
  /** Whether distributed jobs are kept off each other's nodes (Pollux repair step 1). */
  avoid_interference?: boolean;
  /**
   * Overrides of the factory's tunable knobs (`PolicyFactory.params`), already validated: only
   * names the factory lists, each with the type of its default (see policy-params.ts).
   */
  params?: Readonly<Record<string, PolicyParamValue>>;
  /**
   * The integer-program solver of the policies that place by GPU type (PolicyFactory.uses_solver);
   * `createPolicy` (registry.ts) loads it (policy/solver.ts). Absent: such a policy refuses a
   * snapshot of several types (sia: any snapshot) with E_POLICY.
   */
  solver?: MilpSolver;
  /** Knobs of the goodput policy on several GPU types that differ from its defaults (sia/goodput-hetero.ts). */
  mixed_params?: Readonly<Record<string, number>>;
  /**
   * Where the policy saves its memos of pure values and finds those saved before a restart
   * (goodput/memo-bank.ts); every instance made with one bank shares it. Absent: not saved.
   */
  memo_bank?: MemoBank;
}

/**
 * How a policy expects jobs to be sized and batched; the simulator tunes a workload's jobs
 * accordingly ("TunedJobs", pollux-spec §1.7-1.8):
 * - `gang`: all-or-nothing on the workload's GPU count with its total batch (Tiresias, FIFO);
 * - `fixed-oracle`: the workload's total batch, replica count chosen by the policy, with Optimus'
 *   oracle remaining-steps and step-time estimates computed from the true traces;
 * - `adaptive`: Pollux-style: batch size chosen from the job's fitted goodput model, models
 *   exposed to the policy.
 */
export type JobMode = 'gang' | 'fixed-oracle' | 'adaptive';

/** A named policy constructor, registered in the policy registry. */
export interface PolicyFactory {
  readonly name: string;
  readonly description: string;
  /** How the policy expects jobs to be tuned (the simulator reads it). */
  readonly job_mode: JobMode;
  /** Tunable knobs that `create` accepts in `options.params`, with their defaults; absent: none. */
  readonly params?: Readonly<Record<string, PolicyParamValue>>;
  /**
   * Accepted range of numeric knobs where it is not [0, inf): smallest value, largest value
   * (`max`, inclusive), `integer`: whole numbers only.
   */
  readonly param_bounds?: Readonly<Record<string, { min: number; max?: number; integer?: boolean }>>;
  /** Whether its policies need `PolicyOptions.solver` (on several GPU types, or always). */
  readonly uses_solver?: boolean;
  create(options: PolicyOptions): Policy;
}
