import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gpuTypeOf, type Allocation } from '../../core/cluster.js';
import type { ClusterSnapshot } from '../../core/cluster.js';
import type { Policy, PolicyDecision } from '../../policy/policy.js';
import { createPolicy } from '../../policy/registry.js';
import { packagePath } from '../../util/package-root.js';
import { parsePlacements } from '../sia-traces.js';
import { HeteroJob } from './hetero-job.js';
import { KeyProfiles } from './key-profiles.js';
import { clusterNodes, loadHeteroWorkload, parseClusterSpec, simulateHetero } from './hetero-sim.js';
import { loadHeteroApplications, TypeThroughput } from './typed-app.js';
import { correctedThroughput } from '../../goodput/step-correction.js';

/** The Sia data beside the checkout (main) or beside the worktree folder. */
const dataDir = [packagePath('..', 'shared', 'data', 'sia'), packagePath('..', '..', 'shared', 'data', 'sia')].find(
  (d) => existsSync(join(d, 'traces')),
);
const skip = dataDir === undefined ? 'no ../shared/data/sia' : false;
const TYPES = ['aws', 'rtx', 'dgx-ext'];

describe('mixed-cluster spec', () => {
  it('parses TYPE:NODESxGPUS lists into typed nodes in order', () => {
    const nodes = clusterNodes(parseClusterSpec('aws:2x4,rtx:1x8'));
    assert.deepEqual(
      nodes.map((n) => [n.name, n.gpus, n.gpu_type]),
      [
        ['aws-0', 4, 'aws'],
        ['aws-1', 4, 'aws'],
        ['rtx-0', 8, 'rtx'],
      ],
    );
  });
  it('refuses malformed and repeated entries with a usage error', () => {
    assert.throws(() => parseClusterSpec('aws:2'), /'aws:2' is not TYPE:NODESxGPUS/);
    assert.throws(() => parseClusterSpec('aws:1x4,aws:2x4'), /type 'aws' named twice/);
    assert.throws(() => parseClusterSpec(''), /empty/);
  });
});

describe('TypeThroughput', () => {
  const rows = parsePlacements(
    'placement,local_bsz,step_time,sync_time\n1,8,0.1,0\n1,16,0.2,0\n2,8,0.12,0.02\n22,8,0.3,0.2\n',
    'x.csv',
  );
  const t = new TypeThroughput('x', rows);
  it('returns the measured row at a measured placement and batch, linear between batches', () => {
    assert.deepEqual(t.throughput([2], 8), [0.12, 0.02]);
    const [step] = t.throughput([1], 12);
    assert.ok(Math.abs(step - 0.15) < 1e-12);
  });
  it('interpolates an unmeasured replica count between measured shapes of as many nodes', () => {
    const [step] = t.throughput([1, 1], 8);
    assert.ok(Math.abs(step - 0.3) < 1e-12, 'two nodes: the only two-node shape (2 x 2)');
    assert.equal(t.one_gpu_samples_per_s, 16 / 0.2);
  });
});

describe('simulateHetero on the Sia traces', { skip }, () => {
  const cluster = 'aws:2x4,rtx:1x8,dgx-ext:1x8';
  const parts = parseClusterSpec(cluster);
  const apps = () => loadHeteroApplications(join(dataDir!, 'traces'), TYPES);
  const firstJobs = (n: number) =>
    loadHeteroWorkload(join(dataDir!, 'workloads', 'philly', 'workload-1.csv'), apps()).slice(0, n);

  /** Wraps a policy to record every decision's GPU types per job. */
  function spy(inner: Policy, seen: string[][]): Policy {
    return {
      name: inner.name,
      ...(inner.pooled_models ? { pooled_models: true } : {}),
      decide(s: ClusterSnapshot): PolicyDecision {
        const out = inner.decide(s);
        for (const a of Object.values(out.allocations)) seen.push([...new Set(a.map((n) => gpuTypeOf(s.nodes[n]!)))]);
        return out;
      },
    };
  }

  it('sia finishes every job, each allocation on one type, deterministically', async () => {
    const seen: string[][] = [];
    const a = simulateHetero(firstJobs(6), spy(await createPolicy('sia', { seed: 0 }), seen), clusterNodes(parts));
    const b = simulateHetero(firstJobs(6), await createPolicy('sia', { seed: 0 }), clusterNodes(parts));
    assert.equal(a.jobs.length, 6);
    assert.ok(a.jobs.every((j) => j.jct_s > 0 && Number.isFinite(j.jct_s)));
    assert.ok(seen.length > 0 && seen.every((types) => types.length === 1));
    assert.deepEqual(
      a.jobs.map((j) => j.jct_s),
      b.jobs.map((j) => j.jct_s),
    );
    assert.ok(new Set(a.final_types).size > 1, `jobs use more than one type: ${a.final_types.join(',')}`);
  });

  it('type-unaware pollux drops GPUs off the primary type instead of spanning types', async () => {
    const seen: string[][] = [];
    const r = simulateHetero(firstJobs(6), spy(await createPolicy('pollux', { seed: 1 }), seen), clusterNodes(parts));
    assert.equal(r.jobs.length, 6);
    assert.ok(seen.every((types) => types.length === 1));
  });

  it('charges the application restart time, then progresses at the trace rate over the calibration slowdown', () => {
    const app = apps().get('cifar10')!;
    assert.equal(app.rescale_s, 50);
    const calibrated = new HeteroJob({ name: 'a', app, submit_s: 0, pooled: false });
    const raw = new HeteroJob({ name: 'b', app: { ...app, calibration: 1 }, submit_s: 0, pooled: false });
    for (const j of [calibrated, raw]) {
      j.reallocate('rtx', [1]);
      j.step(50);
      assert.equal(j.progress, 0, 'no progress during the restart');
      j.step(5);
    }
    assert.ok(Math.abs(raw.progress / calibrated.progress - 1.8) < 1e-9, `ratio ${raw.progress / calibrated.progress}`);
  });

  /** A policy that moves job 0 between two nodes of the same type every round. */
  function mover(): Policy {
    let flip = false;
    return {
      name: 'mover',
      decide(s: ClusterSnapshot): PolicyDecision {
        flip = !flip;
        const out: Record<string, Allocation> = {};
        if (s.jobs[0]) out[s.jobs[0].id] = [flip ? 0 : 1];
        return { allocations: out };
      },
    };
  }

  it('a move to other nodes of the same shape restarts only with strict_moves (the artifact does not restart)', () => {
    const artifact = simulateHetero(firstJobs(1), mover(), clusterNodes(parts), { max_rounds: 20 });
    const strict = simulateHetero(firstJobs(1), mover(), clusterNodes(parts), { max_rounds: 20, strict_moves: true });
    assert.equal(artifact.jobs[0]!.restarts, 0);
    assert.ok(strict.jobs[0]!.restarts >= 18, `restarts ${strict.jobs[0]!.restarts}`);
  });

  it('with shared profiles, a job has a model on a type before it runs there once another job of its application has', () => {
    const app = apps().get('cifar10')!;
    const profiles = new KeyProfiles();
    const first = new HeteroJob({ name: 'a', app, submit_s: 0, pooled: false, profiles });
    const second = new HeteroJob({ name: 'b', app, submit_s: 0, pooled: false, profiles });
    const alone = new HeteroJob({ name: 'c', app, submit_s: 0, pooled: false });
    first.reallocate('rtx', [2]);
    first.step(200);
    assert.ok(second.model('rtx') !== undefined);
    assert.equal(second.maxProfiled('rtx'), 2);
    assert.equal(alone.model('rtx'), undefined);
  });

  it("with shared profiles, a job's model on a type is corrected where its key measured, as the control plane corrects it", () => {
    const app = apps().get('cifar10')!;
    for (const corrected of [true, false]) {
      const profiles = new KeyProfiles(corrected);
      const first = new HeteroJob({ name: 'a', app, submit_s: 0, pooled: false, profiles });
      const second = new HeteroJob({ name: 'b', app, submit_s: 0, pooled: false, profiles });
      first.reallocate('rtx', [4]);
      const b = first.local_bsz;
      first.step(120);
      const [step] = app.byType.get('rtx')!.throughput([4], b);
      const model = second.model('rtx')!;
      const measured = (4 * b) / step;
      if (corrected) {
        const predicted = correctedThroughput(model.perf, model.correction!, 1, 4, b, 0);
        assert.ok(Math.abs(predicted / measured - 1) < 1e-9, `predicted ${predicted} samples/s, measured ${measured}`);
      } else {
        assert.equal(model.correction, undefined);
      }
    }
  });

  it('with shared profiles, an application that never ran on a type gets a model there transferred from its measured type', () => {
    const profiles = new KeyProfiles();
    const run = (name: string, type: string, placements: number[][]) => {
      const j = new HeteroJob({
        name: `${name}-${type}`,
        app: apps().get(name)!,
        submit_s: 0,
        pooled: false,
        profiles,
      });
      for (const p of placements) {
        j.reallocate(type, p);
        j.step(600);
      }
      return j;
    };
    const shapes = new Map([['dgx-ext', [1, 2, 4, 8].map((r) => ({ num_nodes: 1, num_replicas: r }))]]);
    const rate = (app: string, type: string) => apps().get(app)!.byType.get(type)!.one_gpu_samples_per_s;
    const job = run('cifar10', 'rtx', [[1], [2], [4], [8]]);
    profiles.refreshTransfers(['cifar10'], shapes, rate);
    assert.equal(job.transferred('dgx-ext'), undefined, 'no other application measured both types');
    for (const other of ['bert', 'imagenet'])
      for (const type of ['rtx', 'dgx-ext']) run(other, type, [[1], [2], [4], [8]]);
    profiles.refreshTransfers(['cifar10'], shapes, rate);
    const model = job.transferred('dgx-ext');
    assert.ok(model && model.correction, 'transferred, with its correction to the transfer');
    assert.equal(job.model('dgx-ext'), undefined);
    // Once a job of the application has measured the type, its own fit replaces the transfer.
    run('cifar10', 'dgx-ext', [[2]]);
    profiles.refreshTransfers(['cifar10'], shapes, rate);
    assert.equal(job.transferred('dgx-ext'), undefined);
    assert.ok(job.model('dgx-ext'));
  });
});
