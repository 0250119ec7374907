import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSnapshot, NodeInfo, PolicyJob } from '../core/cluster.js';
import { runPolicyConformance } from './conformance.js';
import { fifoPolicy } from './fifo.js';
import { optimusPolicy } from './optimus.js';
import { TIRESIAS_QUEUE_THRESHOLD_GPU_S, tiresiasPolicy } from './tiresias.js';
import { limitsFixture } from '../goodput/testing/perf-fixture.js';

runPolicyConformance(fifoPolicy);
runPolicyConformance(tiresiasPolicy);
runPolicyConformance(optimusPolicy);

const limits = limitsFixture({ max_local_bsz: 1024 });

function nodes(...gpus: number[]): NodeInfo[] {
  return gpus.map((g, index) => ({ index, name: `n${index}`, gpus: g, preemptible: false }));
}

function job(id: string, over: Partial<PolicyJob> = {}): PolicyJob {
  return {
    id,
    submitted_at_s: 0,
    attained_service_gpu_s: 0,
    min_replicas: 0,
    max_replicas: 1,
    max_profiled_replicas: 0,
    restarts: 0,
    preemptible: true,
    priority: 0,
    limits,
    ...over,
  };
}

const gang = (id: string, n: number, over: Partial<PolicyJob> = {}) =>
  job(id, { min_replicas: n, max_replicas: n, ...over });

describe('tiresias', () => {
  it('admits gangs in queue order, backfills smaller ones and places on the emptiest nodes', () => {
    const p = tiresiasPolicy.create({ seed: 0 });
    const d = p.decide({
      now_s: 60,
      nodes: nodes(4, 4),
      jobs: [gang('a', 6), gang('b', 4), gang('c', 2)],
      allocations: {},
    });
    assert.deepEqual(d.allocations, { a: [0, 0, 0, 0, 1, 1], c: [1, 1] });
    assert.equal(d.rejections?.b?.code, 'QUEUED');
  });

  it('demotes a job after 16 GPU-hours and lets queue 0 preempt it', () => {
    const p = tiresiasPolicy.create({ seed: 0 });
    const first = p.decide({ now_s: 60, nodes: nodes(4), jobs: [gang('big', 4)], allocations: {} });
    assert.deepEqual(first.allocations, { big: [0, 0, 0, 0] });
    const t = 60 + TIRESIAS_QUEUE_THRESHOLD_GPU_S / 4;
    const second = p.decide({
      now_s: t,
      nodes: nodes(4),
      jobs: [gang('big', 4), gang('new', 2)],
      allocations: first.allocations,
    });
    assert.deepEqual(second.allocations, { new: [0, 0] }, 'the demoted job yields to the new queue-0 job');
  });

  it('keeps a non-preemptible job that holds GPUs, even ahead of queue 0', () => {
    const p = tiresiasPolicy.create({ seed: 0 });
    const d = p.decide({
      now_s: 60,
      nodes: nodes(4),
      jobs: [gang('a', 4), gang('np', 2, { preemptible: false })],
      allocations: { np: [0, 0] },
    });
    assert.deepEqual(d.allocations, { np: [0, 0] });
  });

  it('caps the gang at max_replicas and rejects jobs larger than the cluster', () => {
    const p = tiresiasPolicy.create({ seed: 0 });
    const d = p.decide({
      now_s: 60,
      nodes: nodes(2),
      jobs: [job('elastic', { max_replicas: 1 }), gang('huge', 8)],
      allocations: {},
    });
    assert.deepEqual(d.allocations, { elastic: [0] });
    assert.equal(d.rejections?.huge?.code, 'TOO_LARGE');
  });
});

describe('optimus', () => {
  const est = (id: string, times: number[], remaining: number, max = times.length) =>
    job(id, { max_replicas: max, remaining_steps: remaining, step_time_s_by_replicas: times });

  it('gives one GPU each, then GPUs by largest marginal gain, honouring max_replicas', () => {
    const p = optimusPolicy.create({ seed: 0 });
    // Gains: a (1-0.5)*40 = 20, then (0.5-0.25)*40 = 10 (then capped at 3); b (2-1.5)*20 = 10.
    // GPU 3 goes to a (20 > 10); GPU 4 is a tie at 10, won by the first job in order.
    const d = p.decide({
      now_s: 60,
      nodes: nodes(4),
      jobs: [est('a', [1, 0.5, 0.25], 40), est('b', [2, 1.5, 1], 20)],
      allocations: {},
    });
    const counts = Object.fromEntries(Object.entries(d.allocations).map(([k, v]) => [k, v.length]));
    assert.deepEqual(counts, { b: 1, a: 3 });
    const capped = p.decide({
      now_s: 60,
      nodes: nodes(4),
      jobs: [est('a', [1, 0.5, 0.25], 40, 2), est('b', [2, 1.5, 1], 20)],
      allocations: {},
    });
    assert.equal(capped.allocations.a?.length, 2, 'max_replicas caps a at 2');
  });

  it('keeps an allocation whose size is unchanged and places the rest smallest-first', () => {
    const p = optimusPolicy.create({ seed: 0 });
    const d = p.decide({
      now_s: 60,
      nodes: nodes(4, 4),
      jobs: [est('a', [1, 0.9], 1), est('b', [1, 0.5, 0.3, 0.2, 0.1], 1000)],
      allocations: { a: [1, 1] },
    });
    assert.deepEqual(d.allocations.a, [1, 1]);
    assert.equal(d.allocations.b?.length, 5);
  });
});

describe('fifo', () => {
  it('blocks later jobs behind the first one that does not fit', () => {
    const p = fifoPolicy.create({ seed: 0 });
    const snapshot: ClusterSnapshot = {
      now_s: 60,
      nodes: nodes(4),
      jobs: [
        gang('a', 3, { submitted_at_s: 0 }),
        gang('b', 2, { submitted_at_s: 5 }),
        gang('c', 1, { submitted_at_s: 9 }),
      ],
      allocations: {},
    };
    const d = p.decide(snapshot);
    assert.deepEqual(d.allocations, { a: [0, 0, 0] });
    assert.equal(d.rejections?.c?.code, 'QUEUED');
  });
});
