import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Allocation, ClusterSnapshot, NodeInfo, PolicyJob } from '../../core/cluster.js';
import { optimizeBatch } from '../../goodput/optimize.js';
import type { GoodputModel } from '../../goodput/types.js';
import { runPolicyConformance } from '../conformance.js';
import { createPolluxPolicy, polluxMaxReplicas, polluxPolicy } from './pollux-policy.js';

runPolicyConformance(polluxPolicy);

const limits: GoodputModel['limits'] = {
  init_batch_size: 128,
  max_batch_size: 4096,
  min_local_bsz: 32,
  max_local_bsz: 1024,
  accumulation: true,
};
/** cifar10, 4-point fit and epoch-5 gradient statistics of pollux-spec §3.2-3.4. */
const model: GoodputModel = {
  perf: {
    alpha_c: 0.003187,
    beta_c: 0.000781,
    alpha_n: 0.026517,
    beta_n: 0.002843,
    alpha_r: 0.011409,
    beta_r: 0.000398,
    gamma: 1.16224,
  },
  grad: { sqr: 0.573375, var: 1.45455 },
  limits,
};

function nodes(count: number, gpus = 4): NodeInfo[] {
  return Array.from({ length: count }, (_, index) => ({ index, name: `n${index}`, gpus, preemptible: false }));
}

function job(id: string, over: Partial<PolicyJob> = {}): PolicyJob {
  return {
    id,
    submitted_at_s: 0,
    attained_service_gpu_s: 0,
    min_replicas: 0,
    max_replicas: 64,
    max_profiled_replicas: 8,
    restarts: 0,
    preemptible: true,
    priority: 0,
    limits,
    model,
    ...over,
  };
}

function shape(alloc: Allocation | undefined): { nodes: number; replicas: number } {
  return { nodes: new Set(alloc ?? []).size, replicas: alloc?.length ?? 0 };
}

test('effective max replicas: doubling rule, driver cap, batch limits, min_replicas', () => {
  assert.equal(polluxMaxReplicas(job('a', { max_profiled_replicas: 0 })), 1);
  assert.equal(polluxMaxReplicas(job('a', { max_profiled_replicas: 2 })), 4);
  assert.equal(polluxMaxReplicas(job('a', { max_profiled_replicas: 100 })), 64);
  assert.equal(polluxMaxReplicas(job('a', { max_profiled_replicas: 100, max_replicas: 200 })), 4096 / 32);
  assert.equal(polluxMaxReplicas(job('a', { max_profiled_replicas: 100, batch_size_cap: 512 })), 16);
  assert.equal(polluxMaxReplicas(job('a', { max_profiled_replicas: 0, min_replicas: 3 })), 3);
  assert.equal(polluxMaxReplicas(job('a', { max_profiled_replicas: 8, max_replicas: 1 })), 1);
});

test('a job alone gets the placement with the best goodput', () => {
  // Exhaustive optimum over the (nodes, replicas) shapes the 4 x 4 cluster allows, r <= 16.
  let best = 0;
  for (let n = 1; n <= 4; n++)
    for (let r = n; r <= Math.min(4 * n, 16); r++) best = Math.max(best, optimizeBatch(model, n, r).goodput);
  for (const seed of [1, 2, 3]) {
    const policy = polluxPolicy.create({ seed });
    const decision = policy.decide({ now_s: 600, nodes: nodes(4), jobs: [job('solo')], allocations: {} });
    const { nodes: n, replicas: r } = shape(decision.allocations.solo);
    assert.ok(r > 0, 'the job got no GPUs');
    const goodput = optimizeBatch(model, n, r).goodput;
    assert.ok(goodput >= 0.999 * best, `seed ${seed}: (${n}, ${r}) gives ${goodput}, best ${best}`);
  }
});

test('every waiting job gets a GPU when GPUs are free (the 1/0.001 penalty)', () => {
  const policy = polluxPolicy.create({ seed: 1 });
  const jobs = Array.from({ length: 10 }, (_, i) =>
    job(`j${i}`, { model: undefined, max_profiled_replicas: 0, submitted_at_s: i }),
  );
  const decision = policy.decide({ now_s: 120, nodes: nodes(4), jobs, allocations: {} });
  for (const j of jobs)
    assert.equal(decision.allocations[j.id]?.length, 1, `${j.id} got ${decision.allocations[j.id]}`);
});

test('a job submitted this instant still gets idle GPUs: utility breaks the power-mean tie', () => {
  // Its restart factor is 0, so GPUs add nothing to the power mean, but the unpenalized
  // utility objective makes the allocated state dominate the empty one.
  const policy = polluxPolicy.create({ seed: 1 });
  const decision = policy.decide({
    now_s: 60,
    nodes: nodes(2),
    jobs: [job('new', { submitted_at_s: 60, max_profiled_replicas: 0 })],
    allocations: {},
  });
  assert.equal(decision.allocations.new?.length, 1);
});

test('distributed jobs never share a node unless interference avoidance is off', () => {
  const jobs = Array.from({ length: 6 }, (_, i) => job(`m${i}`, { submitted_at_s: i, attained_service_gpu_s: i * 10 }));
  // A model whose network is cheap, so spreading over nodes is attractive.
  const cheapNet: GoodputModel = { ...model, perf: { ...model.perf, alpha_n: 1e-4, beta_n: 1e-5 } };
  const spread = jobs.map((j) => ({ ...j, model: cheapNet }));
  const countShared = (allocations: Record<string, Allocation>): number => {
    const multi = new Map<number, number>();
    for (const alloc of Object.values(allocations)) {
      const set = new Set(alloc);
      if (set.size > 1) for (const n of set) multi.set(n, (multi.get(n) ?? 0) + 1);
    }
    return [...multi.values()].filter((v) => v > 1).length;
  };
  for (const seed of [1, 2]) {
    let allocations: Record<string, Allocation> = {};
    const policy = createPolluxPolicy({ seed });
    for (let round = 0; round < 3; round++) {
      allocations = policy.decide({
        now_s: 600 + round * 60,
        nodes: nodes(4, 3),
        jobs: spread,
        allocations,
      }).allocations;
      assert.equal(countShared(allocations), 0, JSON.stringify(allocations));
    }
  }
});

test('the same seed and snapshots give identical decisions; another seed may differ', () => {
  const run = (seed: number): Record<string, Allocation>[] => {
    const policy = polluxPolicy.create({ seed });
    const jobs = Array.from({ length: 8 }, (_, i) =>
      job(`j${i}`, { submitted_at_s: i * 30, attained_service_gpu_s: i * 100, max_profiled_replicas: 1 + (i % 4) }),
    );
    const out: Record<string, Allocation>[] = [];
    let allocations: Record<string, Allocation> = {};
    for (let round = 0; round < 4; round++) {
      const snapshot: ClusterSnapshot = { now_s: 600 + round * 60, nodes: nodes(4), jobs, allocations };
      allocations = policy.decide(snapshot).allocations;
      out.push(allocations);
    }
    return out;
  };
  assert.deepEqual(run(7), run(7));
});

test('warm start follows jobs across rounds (finished jobs leave, new ones join)', () => {
  const policy = polluxPolicy.create({ seed: 3 });
  const a = job('a');
  const b = job('b', { submitted_at_s: 10 });
  const c = job('c', { submitted_at_s: 100 });
  const first = policy.decide({ now_s: 600, nodes: nodes(2), jobs: [a, b], allocations: {} });
  assert.ok(first.allocations.a && first.allocations.b);
  const second = policy.decide({ now_s: 660, nodes: nodes(2), jobs: [b, c], allocations: { b: first.allocations.b } });
  assert.equal(second.allocations.a, undefined);
  assert.ok((second.allocations.c?.length ?? 0) > 0, 'the new job gets GPUs');
  assert.ok((second.allocations.b?.length ?? 0) > 0);
});
