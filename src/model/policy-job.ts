/**
 * The one builder of a policy's view of a job (core/cluster.ts `PolicyJob`), called by the
 * simulator and the control plane with what each knows, so that both hand a policy the same
 * fields by the same rules. Pure.
 */
import type { JobTypes, PolicyJob } from '../core/cluster.js';
import type { BatchLimits, GoodputModel } from '../goodput/types.js';

/** What a driver knows of one active job at a round. */
export interface PolicyJobFacts {
  id: string;
  submitted_at_s: number;
  attained_service_gpu_s: number;
  min_replicas: number;
  max_replicas: number;
  /** Largest replica count of the job's own measurements (0 before the first). */
  own_max_replicas: number;
  /** Largest replica count of its key's profile in use, if any: also measured sizes. */
  profile_max_replicas?: number;
  profile_key?: string;
  /** Whether its model includes other jobs' measurements (a profile is in use). */
  model_from_profile?: boolean;
  restarts: number;
  preemptible: boolean;
  priority: number;
  limits: BatchLimits;
  fixed_batch_size?: number;
  batch_size_cap?: number;
  /**
   * Its goodput model, or a function computing it on first read (the fit is the expensive part
   * of a round, and some policies never read the model).
   */
  model?: GoodputModel | (() => GoodputModel | undefined);
  remaining_samples?: number;
  remaining_steps?: number;
  step_time_s_by_replicas?: readonly number[];
  /** Seconds of progress a stop now would lose (0: none, e.g. the job checkpoints when stopped). */
  progress_at_risk_s: number;
  /** When its allocation in force started (s), while it holds one. */
  allocated_since_s?: number;
  /** What it knows per GPU type of the cluster (core/cluster.ts JobTypes). */
  per_type?: JobTypes;
  /** Its last resize between positive sizes, where tracked (core/cluster.ts PolicyJob.last_resize). */
  last_resize?: { grew: boolean; measured_since: boolean };
}

/**
 * The PolicyJob of `facts`: measured sizes include the profile's; optional fields appear only
 * when known; progress at risk only when positive.
 */
export function buildPolicyJob(facts: PolicyJobFacts): PolicyJob {
  const pj: PolicyJob = {
    id: facts.id,
    submitted_at_s: facts.submitted_at_s,
    attained_service_gpu_s: facts.attained_service_gpu_s,
    min_replicas: facts.min_replicas,
    max_replicas: facts.max_replicas,
    max_profiled_replicas: Math.max(facts.own_max_replicas, facts.profile_max_replicas ?? 0),
    restarts: facts.restarts,
    preemptible: facts.preemptible,
    priority: facts.priority,
    limits: facts.limits,
  };
  if (facts.profile_key !== undefined) pj.profile_key = facts.profile_key;
  if (facts.model_from_profile !== undefined) pj.model_from_profile = facts.model_from_profile;
  if (facts.fixed_batch_size !== undefined) pj.fixed_batch_size = facts.fixed_batch_size;
  if (facts.batch_size_cap !== undefined) pj.batch_size_cap = facts.batch_size_cap;
  const model = facts.model;
  if (typeof model === 'function') {
    let cached: GoodputModel | undefined | null = null;
    Object.defineProperty(pj, 'model', {
      enumerable: true,
      configurable: true,
      get: () => (cached === null ? (cached = model()) : cached),
    });
  } else if (model) pj.model = model;
  if (facts.remaining_samples !== undefined) pj.remaining_samples = facts.remaining_samples;
  if (facts.remaining_steps !== undefined) pj.remaining_steps = facts.remaining_steps;
  if (facts.step_time_s_by_replicas !== undefined) pj.step_time_s_by_replicas = facts.step_time_s_by_replicas;
  if (facts.progress_at_risk_s > 0) pj.progress_at_risk_s = facts.progress_at_risk_s;
  if (facts.allocated_since_s !== undefined) pj.allocated_since_s = facts.allocated_since_s;
  if (facts.per_type !== undefined) pj.per_type = facts.per_type;
  if (facts.last_resize !== undefined) pj.last_resize = facts.last_resize;
  return pj;
}
