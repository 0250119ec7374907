/**
 * The conformance suite every Policy must pass: it checks only what the Policy contract in
 * policy.ts promises (determinism for a seed, capacity, replica bounds, pinned non-preemptible
 * jobs, jobs absent from the snapshot), over a short multi-round scenario that feeds each
 * decision back into the next snapshot. Call `runPolicyConformance(factory)` from a
 * `*.test.ts` file; it registers node:test cases.
 */
/* eslint-disable no-restricted-imports -- test support: registers node:test cases, never imported by policies */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
/* eslint-enable no-restricted-imports */
import type { Allocation, ClusterSnapshot, NodeInfo, PolicyJob } from '../core/cluster.js';
import { CIFAR_PERF, limitsFixture } from '../goodput/testing/perf-fixture.js';
import type { GoodputModel } from '../goodput/types.js';
import type { PolicyDecision, PolicyFactory } from './policy.js';
import { validateDecision } from './validate-decision.js';

const ROUND_S = 60;

const limits: GoodputModel['limits'] = limitsFixture({ max_local_bsz: 1024 });

/** A fitted-looking model (cifar10-like) so goodput-based policies exercise their models. */
const model: GoodputModel = {
  perf: CIFAR_PERF,
  grad: { sqr: 0.57, var: 1.45 },
  limits,
};

interface JobTemplate {
  id: string;
  submitted_at_s: number;
  max_replicas: number;
  min_replicas?: number;
  preemptible?: boolean;
  withModel?: boolean;
}

const templates: readonly JobTemplate[] = [
  { id: 'a', submitted_at_s: 0, max_replicas: 8, withModel: true },
  { id: 'b', submitted_at_s: 0, max_replicas: 1 },
  { id: 'c', submitted_at_s: 30, max_replicas: 4, min_replicas: 2, withModel: true },
  { id: 'pinned', submitted_at_s: 10, max_replicas: 2, preemptible: false },
  { id: 'late-np', submitted_at_s: 90, max_replicas: 2, preemptible: false },
  { id: 'd', submitted_at_s: 120, max_replicas: 16, withModel: true },
  { id: 'e', submitted_at_s: 150, max_replicas: 6, min_replicas: 1 },
];

function nodesOf(gpus: readonly number[]): NodeInfo[] {
  return gpus.map((g, index) => ({ index, name: `node-${index}`, gpus: g, preemptible: index === gpus.length - 1 }));
}

/** Mutable per-job progress the scenario keeps between rounds. */
interface Progress {
  attained_gpu_s: number;
  max_profiled: number;
  restarts: number;
  started: boolean;
}

function makeJob(t: JobTemplate, p: Progress): PolicyJob {
  const stepTimes: number[] = [];
  for (let r = 1; r <= t.max_replicas; r++) stepTimes.push(0.2 / Math.pow(r, 0.8));
  const job: PolicyJob = {
    id: t.id,
    submitted_at_s: t.submitted_at_s,
    attained_service_gpu_s: p.attained_gpu_s,
    min_replicas: t.min_replicas ?? 0,
    max_replicas: t.max_replicas,
    max_profiled_replicas: p.max_profiled,
    restarts: p.restarts,
    preemptible: t.preemptible ?? true,
    priority: 0,
    limits,
    remaining_steps: 10_000,
    step_time_s_by_replicas: stepTimes,
  };
  if (t.withModel) job.model = model;
  return job;
}

/**
 * Runs `rounds` scheduling rounds on `gpus` nodes. The pinned job starts with [0, 0]; a stale
 * allocation of a finished job ("ghost") is always present in the snapshot. Every decision is
 * checked against the contract, then applied.
 */
function runScenario(factory: PolicyFactory, seed: number, gpus: readonly number[], rounds: number): PolicyDecision[] {
  const policy = factory.create({ seed });
  const nodes = nodesOf(gpus);
  const progress = new Map<string, Progress>(
    templates.map((t) => [t.id, { attained_gpu_s: 0, max_profiled: 0, restarts: 0, started: false }]),
  );
  let allocations: Record<string, Allocation> = {};
  if (nodes.length > 0 && (nodes[0] as NodeInfo).gpus >= 2) allocations.pinned = [0, 0];
  const decisions: PolicyDecision[] = [];
  for (let round = 1; round <= rounds; round++) {
    const now_s = round * ROUND_S;
    const jobs = templates
      .filter((t) => t.submitted_at_s <= now_s)
      .map((t) => makeJob(t, progress.get(t.id) as Progress));
    const snapshot: ClusterSnapshot = {
      now_s,
      nodes,
      jobs,
      allocations: { ...allocations, ghost: nodes.length > 1 ? [1] : [] },
    };
    const decision = policy.decide(snapshot);
    checkDecision(snapshot, decision);
    decisions.push(decision);
    // Apply: service, profiling and restarts as a simulator would count them.
    for (const job of jobs) {
      const p = progress.get(job.id) as Progress;
      const before = snapshot.allocations[job.id] ?? [];
      const after = decision.allocations[job.id] ?? [];
      p.attained_gpu_s += after.length * ROUND_S;
      p.max_profiled = Math.max(p.max_profiled, after.length);
      if (after.length > 0 && !sameAllocation(before, after)) {
        if (p.started) p.restarts++;
        p.started = true;
      }
    }
    allocations = {};
    for (const [id, alloc] of Object.entries(decision.allocations)) if (alloc.length > 0) allocations[id] = alloc;
  }
  return decisions;
}

function sameAllocation(a: Allocation, b: Allocation): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Asserts every promise of the Policy contract for one round. */
function checkDecision(snapshot: ClusterSnapshot, decision: PolicyDecision): void {
  const check = validateDecision(snapshot, decision.allocations);
  assert.ok(check.ok, check.ok ? '' : check.reason);
  for (const job of snapshot.jobs) {
    const alloc = decision.allocations[job.id] ?? [];
    const current = snapshot.allocations[job.id] ?? [];
    if (!job.preemptible && current.length > 0) {
      assert.deepEqual([...alloc], [...current], `non-preemptible job ${job.id} must keep its allocation`);
      continue;
    }
    assert.ok(alloc.length <= job.max_replicas, `job ${job.id}: ${alloc.length} > max_replicas ${job.max_replicas}`);
    assert.ok(
      alloc.length === 0 || alloc.length >= job.min_replicas,
      `job ${job.id}: ${alloc.length} replicas < min_replicas ${job.min_replicas}`,
    );
  }
}

/** Registers the conformance tests of `factory` under `describe`. */
export function runPolicyConformance(factory: PolicyFactory): void {
  describe(`policy conformance: ${factory.name}`, () => {
    it('honours capacity, replica bounds, pinned jobs and the job set in every round', () => {
      runScenario(factory, 1, [4, 4, 2, 4], 8);
    });

    it('is deterministic for a seed', () => {
      const first = runScenario(factory, 42, [4, 4, 2, 4], 6).map((d) => d.allocations);
      const second = runScenario(factory, 42, [4, 4, 2, 4], 6).map((d) => d.allocations);
      assert.deepEqual(second, first);
    });

    it('gives GPUs to some job when GPUs are free', () => {
      const decisions = runScenario(factory, 3, [4, 4], 3);
      const last = decisions[decisions.length - 1] as PolicyDecision;
      const used = Object.values(last.allocations).reduce((n, a) => n + a.length, 0);
      assert.ok(used > 0, 'no GPU was allocated on an idle cluster');
    });

    it('handles a cluster without nodes', () => {
      const decisions = runScenario(factory, 5, [], 2);
      for (const d of decisions) {
        for (const alloc of Object.values(d.allocations)) assert.equal(alloc.length, 0);
      }
    });

    it('handles a round without jobs', () => {
      const policy = factory.create({ seed: 9 });
      const decision = policy.decide({ now_s: 60, nodes: nodesOf([4, 4]), jobs: [], allocations: { ghost: [0] } });
      assert.deepEqual(Object.keys(decision.allocations), []);
    });

    it('handles tiny clusters (one node with one GPU)', () => {
      runScenario(factory, 11, [1], 4);
    });
  });
}
