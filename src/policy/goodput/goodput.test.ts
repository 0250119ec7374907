import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterSnapshot, NodeInfo, PolicyJob } from '../../core/cluster.js';
import { runPolicyConformance } from '../conformance.js';
import { GoodputPolicy, goodputPolicy } from './index.js';

runPolicyConformance(goodputPolicy);

const limits: PolicyJob['limits'] = { init_batch_size: 128, max_batch_size: 4096, min_local_bsz: 32, max_local_bsz: 1024, accumulation: true };
const perf = { alpha_c: 0.0032, beta_c: 0.00078, alpha_n: 0.0265, beta_n: 0.0028, alpha_r: 0.0114, beta_r: 0.0004, gamma: 1.16 };

function nodes(count: number, gpus = 4): NodeInfo[] {
  return Array.from({ length: count }, (_, index) => ({ index, name: `n${index}`, gpus, preemptible: false }));
}

function job(id: string, fields: Partial<PolicyJob> = {}): PolicyJob {
  return {
    id, submitted_at_s: 0, attained_service_gpu_s: 0, min_replicas: 0, max_replicas: 64, max_profiled_replicas: 0,
    restarts: 0, preemptible: true, priority: 0, limits, ...fields,
  };
}

function snapshot(jobs: PolicyJob[], nodeCount: number, allocations: ClusterSnapshot['allocations'] = {}): ClusterSnapshot {
  return { now_s: 3600, nodes: nodes(nodeCount), jobs, allocations };
}

test('a new job without a model starts on one GPU (exploration rule)', () => {
  const decision = new GoodputPolicy().decide(snapshot([job('a')], 2));
  assert.deepEqual(decision.allocations, { a: [0] });
});

test('when jobs outnumber GPUs, the jobs with the least attained service run', () => {
  const jobs = [0, 1, 2, 3, 4, 5].map((i) => job(`j${i}`, { attained_service_gpu_s: (5 - i) * 1000 }));
  const decision = new GoodputPolicy().decide(snapshot(jobs, 1));
  assert.deepEqual(Object.keys(decision.allocations).sort(), ['j2', 'j3', 'j4', 'j5']);
  assert.equal(decision.rejections?.j0?.code, 'WAITING_FOR_GPUS');
});

test('a profiled job with a good speedup grows beyond one node, on whole nodes', () => {
  const big = job('big', { max_profiled_replicas: 8, model: { perf, grad: { sqr: 0.05, var: 5 }, limits } });
  const decision = new GoodputPolicy().decide(snapshot([big], 4));
  const allocation = decision.allocations.big ?? [];
  assert.ok(allocation.length > 4, `expected > 4 replicas, got ${allocation.length}`);
  const perNode = new Map<number, number>();
  for (const n of allocation) perNode.set(n, (perNode.get(n) ?? 0) + 1);
  assert.ok([...perNode.values()].filter((c) => c < 4).length <= 1, 'at most one partially used node');
});

test('two distributed jobs never share a node', () => {
  const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
  const jobs = ['x', 'y', 'z'].map((id) => job(id, { max_profiled_replicas: 4, model }));
  const decision = new GoodputPolicy().decide(snapshot(jobs, 5));
  const owners = new Map<number, Set<string>>();
  for (const [id, allocation] of Object.entries(decision.allocations)) {
    if (new Set(allocation).size < 2) continue;
    for (const n of allocation) owners.set(n, (owners.get(n) ?? new Set()).add(id));
  }
  for (const [node, ids] of owners) assert.equal(ids.size, 1, `node ${node} hosts ${[...ids].join(', ')}`);
});

test('a running job moves to more GPUs only when the gain pays for the restart', () => {
  // Speedups 1, 1.10, 1.23, 1.27 for 1..4 GPUs on one node: +16% from 2 to 4 GPUs.
  const model = { perf: { ...perf, alpha_r: 0.05, beta_r: 0.005 }, grad: { sqr: 1, var: 0.1 }, limits };
  const running = job('r', { max_profiled_replicas: 2, model, submitted_at_s: 3500 });
  const state = snapshot([running], 1, { r: [0, 0] });
  // Default pricing: a 30 s restart over a >= 300 s horizon costs ~9%, less than the 16% gain.
  assert.deepEqual(new GoodputPolicy().decide(state).allocations.r, [0, 0, 0, 0]);
  // A short horizon (restart costs ~50% of the remaining time): stay put.
  assert.deepEqual(new GoodputPolicy({ min_horizon_s: 30 }).decide(state).allocations.r, [0, 0]);
});

test('a batch-size cap limits the replicas a job can use', () => {
  const capped = job('c', { max_profiled_replicas: 16, batch_size_cap: 128, model: { perf, grad: { sqr: 0.01, var: 10 }, limits } });
  const decision = new GoodputPolicy().decide(snapshot([capped], 4));
  assert.ok((decision.allocations.c ?? []).length <= 4, 'at most 128 / 32 = 4 replicas');
});
