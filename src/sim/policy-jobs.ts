/**
 * The policy's view of a simulated job in each job mode (job-modes.ts): gang and fixed-batch
 * jobs with Optimus' oracle step times, and adaptive jobs built as the control plane builds them.
 */
import { DEFAULT_GPU_TYPE, type PolicyJob } from '../core/cluster.js';
import { splitFixedBatch } from '../goodput/batch-split.js';
import { oneTypeJobTypes } from '../model/job-types.js';
import { buildPolicyJob, type PolicyJobFacts } from '../model/policy-job.js';
import { packedPlacement } from './artifact-arithmetic.js';
import type { JobMode } from './job-modes.js';
import { RESTART_DELAY_S, type SimJob } from './sim-job.js';
import type { WorkloadJob } from './workload.js';

/** Optimus' oracle step times per (application, fixed batch), computed once per run (§5.1). */
export class OracleCache {
  private readonly memo = new Map<string, number[]>();
  constructor(
    private readonly gpusPerNode: number,
    private readonly totalGpus: number,
  ) {}

  stepTimes(w: WorkloadJob, max_replicas: number): number[] {
    const key = `${w.application.name}:${w.batch_size}`;
    let times = this.memo.get(key);
    if (!times) {
      times = [];
      const limit = Math.min(max_replicas, this.totalGpus);
      for (let r = 1; r <= limit; r++) {
        const c = splitFixedBatch(w.application.limits, w.batch_size, r, true);
        const [step, sync] = w.application.throughput(packedPlacement(r, this.gpusPerNode), c.local_bsz);
        times.push(step + (step - sync) * c.accum_steps);
      }
      this.memo.set(key, times);
    }
    return times;
  }
}

/** The policy's view of `job` in `mode`; `oracle` serves the fixed-oracle mode's step times. */
export function policyJob(
  job: SimJob,
  w: WorkloadJob,
  mode: JobMode,
  totalGpus: number,
  oracle: OracleCache,
): PolicyJob {
  const app = job.app;
  const isNcf = app.name === 'ncf';
  const base = baseFacts(job);
  if (mode === 'gang') {
    return buildPolicyJob({
      ...base,
      min_replicas: w.num_replicas,
      max_replicas: w.num_replicas,
      fixed_batch_size: w.batch_size,
    });
  }
  if (mode === 'fixed-oracle') {
    const max_replicas = isNcf ? 1 : Math.floor(w.batch_size / app.min_local_bsz);
    const done = app.completion_epoch <= job.epoch;
    const remaining_steps = done
      ? 1
      : app.iteration(w.batch_size, app.completion_epoch) - app.iteration(w.batch_size, job.epoch);
    return buildPolicyJob({
      ...base,
      min_replicas: 0,
      max_replicas,
      fixed_batch_size: w.batch_size,
      remaining_steps,
      step_time_s_by_replicas: oracle.stepTimes(w, max_replicas),
    });
  }
  return adaptivePolicyJob(job, totalGpus);
}

/**
 * The policy's view of a job in adaptive mode on a cluster of `totalGpus` (model/policy-job.ts
 * builds it, as for the control plane). Simulated jobs checkpoint when stopped: nothing at risk.
 */
export function adaptivePolicyJob(job: SimJob, totalGpus: number): PolicyJob {
  const app = job.app;
  const base = baseFacts(job);
  const max_replicas = app.name === 'ncf' ? 1 : Math.min(totalGpus, Math.floor(app.max_batch_size / app.min_local_bsz));
  // Jobs declare their length (epochs), so the remaining work is known as it would be from the SDK.
  const remaining_samples = Math.max(0, app.target_progress - job.progress) * app.limits.init_batch_size;
  const pj = buildPolicyJob({
    ...base,
    min_replicas: 0,
    max_replicas,
    ...(job.target_batch_size !== undefined ? { fixed_batch_size: job.target_batch_size } : {}),
    remaining_samples,
    profile_max_replicas: job.measuredReplicas,
    ...(job.profileKey !== undefined ? { profile_key: job.profileKey, model_from_profile: job.modelFromProfile } : {}),
    // The fit is the expensive part of a round: only run it if the policy reads the model.
    ...(job.profiled ? { model: () => job.model() } : {}),
  });
  // Its facts on the cluster's one type, for a policy that places by type (sia).
  const restarting = job.rescale_s > 0 && job.placement.length > 0;
  pj.per_type = oneTypeJobTypes(pj, DEFAULT_GPU_TYPE, { remaining_samples, restart_s: RESTART_DELAY_S, restarting });
  return pj;
}

/** What every mode's policy job says of a simulated job. */
function baseFacts(job: SimJob): Omit<PolicyJobFacts, 'min_replicas' | 'max_replicas'> {
  return {
    id: job.name,
    submitted_at_s: job.submit_s,
    attained_service_gpu_s: job.attained_gpu_s,
    restarts: job.restarts ?? 0,
    own_max_replicas: job.max_profiled_replicas,
    preemptible: true,
    priority: 0,
    limits: job.app.limits,
    // Simulated jobs checkpoint when stopped, so a stop loses no progress (only the restart delay).
    progress_at_risk_s: 0,
    ...(job.allocated_at_s !== undefined ? { allocated_since_s: job.allocated_at_s } : {}),
  };
}
