import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  gpuTypeOf,
  type Allocation,
  type ClusterSnapshot,
  type JobTypes,
  type NodeInfo,
  type PolicyJob,
} from '../../core/cluster.js';
import { loadHighsSolver } from '../../policy/solver.js';
import { typeGroups, type TypedJob } from '../typed.js';
import { validateDecision } from '../validate-decision.js';
import type { MilpSolver } from './assignment.js';
import { solveAssignment } from './assignment.js';
import { runPolicyConformance } from '../conformance.js';
import { GOODPUT_HETERO_DEFAULTS, GoodputHetero } from './goodput-hetero.js';
import { siaPolicy } from './index.js';
import { placeFast, placeSticky, SiaPolicy, siaConfigs } from './sia.js';
import { limitsFixture } from '../../goodput/testing/perf-fixture.js';

const nodes: NodeInfo[] = [
  { index: 0, name: 'slow-0', gpus: 4, preemptible: false, gpu_type: 'slow' },
  { index: 1, name: 'slow-1', gpus: 4, preemptible: false, gpu_type: 'slow' },
  { index: 2, name: 'fast-0', gpus: 8, preemptible: false, gpu_type: 'fast' },
];

/** A job's policy view: `over` sets its per-type facts or its own fields. */
function job(id: string, over: Partial<JobTypes> & Partial<Pick<PolicyJob, 'submitted_at_s'>> = {}): TypedJob {
  const { submitted_at_s, ...types } = over;
  const limits = limitsFixture();
  return {
    id,
    profile_key: 'cifar10',
    submitted_at_s: submitted_at_s ?? 0,
    attained_service_gpu_s: 0,
    min_replicas: 0,
    restarts: 0,
    max_replicas: 16,
    max_profiled_replicas: 0,
    preemptible: true,
    priority: 0,
    limits,
    per_type: {
      max_profiled: { slow: 0, fast: 0 },
      model: () => undefined,
      limits: () => limits,
      one_gpu_samples_per_s: { slow: 100, fast: 400 },
      remaining_samples: 1e6,
      restart_s: 50,
      restarting: false,
      ...types,
    },
  };
}

const solver: MilpSolver = await loadHighsSolver();

// Sia as registered (over the open nodes, pinned jobs kept) on the one-type scenario of the suite,
// its jobs' per-type facts derived from their policy jobs (typed.ts `typedJobs`).
runPolicyConformance({ ...siaPolicy, create: (options) => siaPolicy.create({ ...options, solver }) });

describe('siaConfigs', () => {
  it('offers powers of two below a node, then whole nodes, per type', () => {
    const configs = siaConfigs(typeGroups(nodes));
    assert.deepEqual(
      configs.filter((c) => c.type === 'slow').map((c) => [c.nodes, c.gpus]),
      [
        [1, 1],
        [1, 2],
        [1, 4],
        [2, 8],
      ],
    );
    assert.deepEqual(
      configs.filter((c) => c.type === 'fast').map((c) => [c.nodes, c.gpus]),
      [
        [1, 1],
        [1, 2],
        [1, 4],
        [1, 8],
      ],
    );
  });
});

describe('solveAssignment', () => {
  it('takes the cheapest feasible mix under the GPU bounds (HiGHS)', () => {
    const rows = [
      {
        id: 'a',
        costs: new Map([
          [0, -1],
          [1, -3],
        ]),
      },
      { id: 'b', costs: new Map([[1, -2.5]]) },
    ];
    // Config 1 uses 2 of the 3 GPUs: only one job may take it; a:0 + b:1 (-3.5) beats a:1 (-3).
    const chosen = solveAssignment(
      solver,
      rows,
      [
        { group: 0, gpus: 1 },
        { group: 0, gpus: 2 },
      ],
      [3],
    );
    assert.deepEqual([...chosen].sort(), [
      ['a', 0],
      ['b', 1],
    ]);
  });
});

describe('SiaPolicy', () => {
  const snapshot = (
    jobs: TypedJob[],
    allocations: ClusterSnapshot['allocations'] = {},
    now_s = 60,
  ): ClusterSnapshot => ({ now_s, nodes, jobs, allocations });

  it('gives a job without a model one GPU, on one type, and never over-commits', () => {
    const jobs = Array.from({ length: 20 }, (_, i) => job(`j${i}`));
    const out = new SiaPolicy(solver).decide(snapshot(jobs)).allocations;
    assert.deepEqual(validateDecision({ nodes, jobs }, out), { ok: true });
    const sizes = Object.values(out).map((a) => a.length);
    assert.equal(sizes.length, 16, 'every GPU used by a one-GPU job');
    assert.ok(sizes.every((n) => n === 1));
  });

  it('keeps a restarting job where it is', () => {
    const policy = new SiaPolicy(solver);
    const first = policy.decide(snapshot([job('a')])).allocations;
    const again = policy.decide(
      snapshot([job('a', { restarting: true }), ...Array.from({ length: 20 }, (_, i) => job(`n${i}`))], first, 120),
    ).allocations;
    assert.deepEqual(again['a'], first['a']);
  });
});

describe('GoodputHetero', () => {
  it('starts a job without a model on the type of highest one-GPU throughput', () => {
    const out = new GoodputHetero(solver).decide({ now_s: 60, nodes, jobs: [job('a')], allocations: {} }).allocations;
    assert.equal(gpuTypeOf(nodes[out['a']![0]!]!), 'fast');
  });

  it('keeps a job on its nodes while its size is unchanged, where Sia re-packs', () => {
    const slow = typeGroups(nodes)[0]!;
    const jobs = [
      { id: 'a', gpus: 1 },
      { id: 'c', gpus: 2 },
    ];
    const gpus = nodes.map((n) => n.gpus);
    assert.deepEqual(placeSticky(slow, jobs, gpus, { a: [0] }), { a: [0], c: [0, 0] });
    assert.deepEqual(placeFast(slow, jobs, gpus), { c: [0, 0], a: [1] });
  });

  it('values a type its key has not run on by the transferred model when transfer_types is 1, else by the one-GPU ratio', () => {
    const limits = job('x').limits;
    const grad = { sqr: 1, var: 10 };
    // On slow GPUs a slow network: 4 GPUs barely beat one. Measured there only.
    const slowModel = {
      perf: { alpha_c: 0.01, beta_c: 0.001, alpha_n: 1, beta_n: 0.1, alpha_r: 1, beta_r: 0.1, gamma: 1 },
      grad,
      limits,
    };
    // What the transfer learned of the fast type from other keys: the same GPUs on a fast network.
    const fastModel = {
      perf: { ...slowModel.perf, alpha_n: 0.001, beta_n: 0.0001, alpha_r: 0.001, beta_r: 0.0001 },
      grad,
      limits,
    };
    const measured = job('a', {
      max_profiled: { slow: 4, fast: 0 },
      one_gpu_samples_per_s: { slow: 100, fast: 100 },
      model: (t) => (t === 'slow' ? slowModel : undefined),
      transferred: (t) => (t === 'fast' ? fastModel : undefined),
    });
    const typeOf = (transfer_types: number) => {
      const out = new GoodputHetero(solver, { ...GOODPUT_HETERO_DEFAULTS, transfer_types }).decide({
        now_s: 60,
        nodes,
        jobs: [measured],
        allocations: {},
      }).allocations;
      return { type: gpuTypeOf(nodes[out['a']![0]!]!), gpus: out['a']!.length };
    };
    assert.deepEqual(typeOf(1), { type: 'fast', gpus: 8 });
    // The ratio rule carries the slow network over: the fast type is no better, and the slow one is listed first.
    assert.equal(typeOf(0).type, 'slow');
  });

  it('discounts a move to another GPU type by type_change: a 10% gain moves a job without it, not with the default 0.85', () => {
    const limits = job('x').limits;
    const grad = { sqr: 1, var: 10 };
    const perf = { alpha_c: 0.01, beta_c: 0.001, alpha_n: 0.01, beta_n: 0.001, alpha_r: 0.01, beta_r: 0.001, gamma: 1 };
    const typeAfter = (type_change: number) => {
      let fastKnown = false;
      // The fast type, once measured, computes 10% faster; before, it is modelled by the ratio rule at 0.9x.
      const fast = { perf: { ...perf, alpha_c: perf.alpha_c / 1.1, beta_c: perf.beta_c / 1.1 }, grad, limits };
      const a = job('a', {
        max_profiled: { slow: 4, fast: 4 },
        one_gpu_samples_per_s: { slow: 100, fast: 90 },
        // Young (Sia's age factor is 1) and far from done (a restart costs nothing against the rest).
        submitted_at_s: 100,
        remaining_samples: 1e12,
        model: (t) => (t === 'slow' ? { perf, grad, limits } : fastKnown ? fast : undefined),
      });
      const policy = new GoodputHetero(solver, { ...GOODPUT_HETERO_DEFAULTS, type_change });
      const first: Record<string, Allocation> = policy.decide({
        now_s: 60,
        nodes,
        jobs: [a],
        allocations: {},
      }).allocations;
      assert.equal(gpuTypeOf(nodes[first['a']![0]!]!), 'slow');
      fastKnown = true;
      const second = policy.decide({ now_s: 120, nodes, jobs: [a], allocations: first }).allocations;
      return gpuTypeOf(nodes[second['a']![0]!]!);
    };
    assert.equal(typeAfter(1), 'fast');
    assert.equal(typeAfter(GOODPUT_HETERO_DEFAULTS.type_change), 'slow');
  });
});
