/** A stored job and its spec, for tests of the store and the layers above it. */
import { emptyProfile } from '../goodput/key-profile.js';
import type { PerfParams, ProfilePoint } from '../goodput/types.js';
import type { NewReplica } from './store.js';
import type { JobRecord, JobSpec, StoredKeyProfile } from './types.js';

/** A one-replica spec that runs `true` in /tmp, never restarts and may be preempted; `extra` overrides any field. */
export function jobSpecFixture(extra: Partial<JobSpec> = {}): JobSpec {
  return {
    name: 'j',
    command: ['true'],
    workdir: '/tmp',
    env: {},
    min_replicas: 0,
    max_replicas: 1,
    max_restarts: 0,
    preemptible: true,
    priority: 0,
    ...extra,
  };
}

/**
 * The spec of a training job of profile key `train`: `python3 train.py` in /, up to 8 replicas,
 * as the control plane's report and profile tests submit it; `extra` overrides any field.
 */
export function trainSpecFixture(extra: Partial<JobSpec> = {}): JobSpec {
  return jobSpecFixture({
    command: ['python3', 'train.py'],
    workdir: '/',
    max_replicas: 8,
    profile: 'train',
    ...extra,
  });
}

/**
 * The stored profile of `key` on `gpu_type` that one earlier job measured at `points` and that
 * was fitted as `perf`, without limits; `extra` overrides any field.
 */
export function storedProfileFixture(
  key: string,
  gpu_type: string,
  points: ProfilePoint[],
  perf: PerfParams,
  extra: Partial<StoredKeyProfile> = {},
): StoredKeyProfile {
  return {
    ...emptyProfile(key, gpu_type),
    points,
    jobs: 1,
    job_ids: ['earlier'],
    perf,
    limits: null,
    updated_at_ms: 0,
    ...extra,
  };
}

/** Rank 0 on device 0 of the local node, pid 1, started at `started_at_ms`, for `launchJob`; `extra` overrides. */
export function replicaFixture(started_at_ms: number, extra: Partial<NewReplica> = {}): NewReplica {
  return {
    rank: 0,
    device: 0,
    node: 'local',
    launch_id: '',
    pid: 1,
    proc_start: '',
    log_path: '',
    started_at_ms,
    ...extra,
  };
}

/**
 * A running job on one device that has reported: limits, a fitted model whose synchronization
 * is cheap (growing pays off) and gradient statistics. `extra` overrides any field.
 */
export function jobRecordFixture(extra: Partial<JobRecord> = {}): JobRecord {
  return {
    id: 'j',
    name: 'j',
    user: 'u',
    state: 'running',
    spec: jobSpecFixture({ command: ['x'], workdir: '/', max_replicas: 4, max_restarts: 1 }),
    submitted_at_ms: 0,
    started_at_ms: 0,
    finished_at_ms: null,
    launches: 1,
    failures: 0,
    allocation: [0],
    devices: [0],
    not_before_ms: 0,
    launched_at_ms: 0,
    stop_requested_at_ms: null,
    attained_service_gpu_s: 0,
    max_profiled_replicas: 1,
    limits: { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 8, max_local_bsz: 256, accumulation: true },
    perf: { alpha_c: 0.01, beta_c: 0.001, alpha_n: 1e-8, beta_n: 1e-8, alpha_r: 0.001, beta_r: 0.0001, gamma: 1.5 },
    grad: { sqr: 0.5, var: 5 },
    step: 10,
    samples: 640,
    remaining_samples: null,
    model_parameters: null,
    correction: null,
    last_report_at_ms: 0,
    checkpoint_at_ms: null,
    checkpoint_on_stop: false,
    last_step_time_s: null,
    stop_kind: null,
    last_failure: null,
    health: null,
    reason: '',
    profile_use: null,
    ...extra,
  };
}
