/** Builders of policy inputs for the goodput policy's tests (no test runner imports here). */
import type { ClusterSnapshot, NodeInfo, PolicyJob } from '../../core/cluster.js';
import { CIFAR_PERF, limitsFixture } from '../../goodput/testing/perf-fixture.js';

export const limits: PolicyJob['limits'] = limitsFixture({ max_local_bsz: 1024 });
export const perf = CIFAR_PERF;

/** `count` nodes of `gpus` GPUs each. */
export function nodes(count: number, gpus = 4): NodeInfo[] {
  return Array.from({ length: count }, (_, index) => ({ index, name: `n${index}`, gpus, preemptible: false }));
}

/** A preemptible job submitted at 0 that has never run, with `fields` overriding. */
export function job(id: string, fields: Partial<PolicyJob> = {}): PolicyJob {
  return {
    id,
    submitted_at_s: 0,
    attained_service_gpu_s: 0,
    min_replicas: 0,
    max_replicas: 64,
    max_profiled_replicas: 0,
    restarts: 0,
    preemptible: true,
    priority: 0,
    limits,
    ...fields,
  };
}

/** A snapshot at t = 3600 s. */
export function snapshot(
  jobs: PolicyJob[],
  nodeCount: number,
  allocations: ClusterSnapshot['allocations'] = {},
  now_s = 3600,
): ClusterSnapshot {
  return { now_s, nodes: nodes(nodeCount), jobs, allocations };
}
