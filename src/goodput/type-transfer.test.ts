import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TypeMeasurement } from './type-measurement.js';
import {
  batchCurve,
  factorAt,
  fitTypeFactors,
  hostFloorCurve,
  learnTypeFactors,
  leftOutPredictor,
  oneGpuRatioStep_s,
  overlapStep_s,
  relativeContentionCurve,
  transferPredictor,
  type TransferJob,
} from './type-transfer.js';

const BATCHES = [4, 8, 16, 32];
const PLACEMENTS = [[1], [2], [4], [1, 1], [2, 2], [4, 4], [4, 4, 4]];

/** A synthetic job on a synthetic type: its compute overlapped with size x the network's time of the shape by gamma. */
interface World {
  /** Micro-step time on one GPU (s). */
  compute_s: (local_bsz: number) => number;
  /** Network time of a unit-size gradient (s), per shape. */
  network_s: (num_nodes: number, num_replicas: number) => number;
  size: number;
  gamma: number;
  /** Multi-GPU micro-step time over one-GPU micro-step time, per shape and batch; absent: 1. */
  contention?: (num_nodes: number, num_replicas: number, local_bsz: number) => number;
  /** Host work per step that the GPUs of a node share (s), a floor under the micro-step (one GPU's too); absent: none. */
  host_s?: (num_nodes: number, num_replicas: number) => number;
  /** The host works while the GPUs compute and synchronize: host_s floors the whole multi-GPU step instead of the micro-step. */
  hostOverlaps?: boolean;
}

function measure(w: World): TypeMeasurement[] {
  return PLACEMENTS.flatMap((placement) =>
    BATCHES.map((local_bsz) => {
      const num_nodes = placement.length;
      const num_replicas = placement.reduce((s, g) => s + g, 0);
      const gpu_s =
        w.compute_s(local_bsz) *
        (num_replicas > 1 && w.contention ? w.contention(num_nodes, num_replicas, local_bsz) : 1);
      const host_s = w.host_s?.(num_nodes, num_replicas) ?? 0;
      const network = w.size * w.network_s(num_nodes, num_replicas);
      if (w.hostOverlaps && num_replicas > 1) {
        // The GPUs wait for their batch (the micro-step), then the network; the host's work for the next step runs meanwhile.
        const step_time_s = Math.max(host_s, overlapStep_s(gpu_s, network, w.gamma));
        return {
          placement,
          num_nodes,
          num_replicas,
          local_bsz,
          step_time_s,
          sync_time_s: step_time_s - Math.min(step_time_s, Math.max(gpu_s, host_s)),
        };
      }
      const compute = Math.max(gpu_s, host_s);
      // One GPU: a small measured sync that is not network time (the traces' one-GPU rows have one too).
      const step_time_s = num_replicas > 1 ? overlapStep_s(compute, network, w.gamma) : compute + 0.01 * network;
      return { placement, num_nodes, num_replicas, local_bsz, step_time_s, sync_time_s: step_time_s - compute };
    }),
  );
}

/** Six jobs differing in compute speed, batch scaling and gradient size. */
const JOBS = [0.5, 1, 2, 3, 5, 8].map((k, j) => ({
  fixed: 0.01 * k,
  perSample: 0.002 * (j + 1),
  size: 0.3 * k + j * 0.05,
}));
/** The reference type: a slow GPU on a slow network. */
const referenceWorld = (j: (typeof JOBS)[number], gamma: number): World => ({
  compute_s: (b) => j.fixed + j.perSample * b,
  network_s: (n, r) => (n > 1 ? 0.2 + 0.01 * r : 0.02 * r),
  size: j.size,
  gamma,
});
/** The target type: 3x faster compute, a fast network with its own shape dependence. */
const targetWorld = (j: (typeof JOBS)[number], gamma: number): World => ({
  compute_s: (b) => (j.fixed + j.perSample * b) / 3,
  network_s: (n, r) => (n > 1 ? 0.01 + 0.004 * r : 0.001 * r),
  size: j.size,
  gamma,
});

const jobsOn = (target: (j: (typeof JOBS)[number], gamma: number) => World, gamma: number): TransferJob[] =>
  JOBS.map((j) => ({ reference: measure(referenceWorld(j, gamma)), target: measure(target(j, gamma)) }));
const oneGpu = (rows: readonly TypeMeasurement[]): TypeMeasurement[] => rows.filter((m) => m.num_replicas === 1);

describe('cross-type transfer', () => {
  for (const gamma of [1, 2, 3]) {
    it(`reproduces a synthetic type (overlap ${gamma}) exactly, leaving each job out, where the ratio rule does not`, () => {
      const jobs = jobsOn(targetWorld, gamma);
      let worstRatioRule = 0;
      for (const [i, job] of jobs.entries()) {
        const factors = fitTypeFactors(jobs.filter((_, k) => k !== i));
        assert.equal(factors.num_jobs, JOBS.length - 1);
        assert.deepEqual(factors.rule, { basis: 'step', gamma });
        const predict = transferPredictor({ reference: job.reference, target: oneGpu(job.target) }, factors);
        assert.ok(predict);
        for (const m of job.target.filter((r) => r.num_replicas > 1)) {
          const step = predict(m.num_nodes, m.num_replicas, m.local_bsz) as number;
          assert.ok(Math.abs(step / m.step_time_s - 1) < 1e-9, `${JSON.stringify(m)}: predicted ${step}`);
          const sia = oneGpuRatioStep_s(m, job.reference, oneGpu(job.target)) as number;
          worstRatioRule = Math.max(worstRatioRule, Math.abs(m.step_time_s / sia - 1));
        }
      }
      assert.ok(worstRatioRule > 0.3, `ratio rule worst error ${worstRatioRule}`);
    });
  }

  it('reads the network from the measured sync when multi-GPU compute slows down with the shape, and is exact', () => {
    const contended = (j: (typeof JOBS)[number], gamma: number): World => ({
      ...targetWorld(j, gamma),
      contention: (n, r) => 1 + 0.1 * Math.log2(r / n) + 0.05 * n,
    });
    const jobs = jobsOn(contended, 1);
    for (const [i, job] of jobs.entries()) {
      const factors = fitTypeFactors(jobs.filter((_, k) => k !== i));
      assert.deepEqual(factors.rule, { basis: 'sync' });
      const predict = transferPredictor({ reference: job.reference, target: oneGpu(job.target) }, factors);
      for (const m of job.target.filter((r) => r.num_replicas > 1)) {
        const step = predict?.(m.num_nodes, m.num_replicas, m.local_bsz) as number;
        assert.ok(Math.abs(step / m.step_time_s - 1) < 1e-9, `${JSON.stringify(m)}: predicted ${step}`);
      }
    }
  });

  it('keeps a host-bound job at its host floor on a faster type, where one-GPU compute alone would be 3x off', () => {
    // The host work grows with the GPUs on a node and exceeds every batch's GPU compute of job 0 on both types.
    const host_s = (n: number, r: number): number => 0.08 * (r / n);
    const hostBound = (world: World, j: number): World => (j === 0 ? { ...world, host_s, size: 0.01 } : world);
    const jobs: TransferJob[] = JOBS.map((j, i) => ({
      reference: measure(hostBound(referenceWorld(j, 2), i)),
      target: measure(hostBound(targetWorld(j, 2), i)),
    }));
    const job = jobs[0] as TransferJob;
    const others = jobs.slice(1);
    const predict = transferPredictor({ reference: job.reference, target: oneGpu(job.target) }, fitTypeFactors(others));
    for (const m of job.target.filter((r) => r.num_replicas > 1)) {
      const step = predict?.(m.num_nodes, m.num_replicas, m.local_bsz) as number;
      assert.ok(Math.abs(m.step_time_s / step - 1) < 0.02, `${JSON.stringify(m)}: predicted ${step}`);
    }
  });

  it("hides a host-bound job's network behind its host floor, which bounds the whole step, where a floor under the compute is >10% off", () => {
    // Job 0's host work (0.08 s per GPU of a node) overlaps its GPUs' compute and network (steps add up, gamma 1); its
    // gradient is large: on the reference's slow network its multi-node steps are network-bound, on the target's fast one
    // they are the host's.
    const host_s = (n: number, r: number): number => 0.08 * (r / n);
    const hostBound = (world: World, j: number): World =>
      j === 0 ? { ...world, host_s, hostOverlaps: true, size: 2 } : world;
    const jobs: TransferJob[] = JOBS.map((j, i) => ({
      reference: measure(hostBound(referenceWorld(j, 1), i)),
      target: measure(hostBound(targetWorld(j, 1), i)),
    }));
    const job = jobs[0] as TransferJob;
    assert.ok(hostFloorCurve(job.reference));
    const predict = transferPredictor(
      { reference: job.reference, target: oneGpu(job.target) },
      fitTypeFactors(jobs.slice(1)),
    );
    let worstOnTop = 0;
    // One GPU per node has no floor (the one-GPU rows hold the host's work), so those shapes are left aside.
    for (const m of job.target.filter((r) => r.num_replicas / r.num_nodes >= 2)) {
      const step = predict?.(m.num_nodes, m.num_replicas, m.local_bsz) as number;
      assert.ok(Math.abs(m.step_time_s / step - 1) < 0.03, `${JSON.stringify(m)}: predicted ${step}`);
      // The network added on top of the host's time instead, as a floor under the compute would have it.
      const network_s = 2 * targetWorld(JOBS[0] as (typeof JOBS)[number], 1).network_s(m.num_nodes, m.num_replicas);
      worstOnTop = Math.max(
        worstOnTop,
        overlapStep_s(host_s(m.num_nodes, m.num_replicas), network_s, 1) / m.step_time_s - 1,
      );
    }
    assert.ok(worstOnTop > 0.1, `network on top of the floor: worst ${worstOnTop}`);
  });

  it("never reads the predicted job's own multi-GPU rows on the target", () => {
    const jobs = jobsOn(targetWorld, 2);
    const factors = fitTypeFactors(jobs.slice(1));
    const first = jobs[0] as TransferJob;
    const withOwn = transferPredictor(first, factors);
    const without = transferPredictor({ reference: first.reference, target: oneGpu(first.target) }, factors);
    for (const [n, r, b] of [
      [2, 8, 8],
      [1, 4, 16],
      [3, 12, 4],
    ] as const)
      assert.equal(withOwn?.(n, r, b), without?.(n, r, b));
  });

  it('leaving a job out, its prediction does not move when its own multi-GPU rows on the target are perturbed', () => {
    // Job 0 host-bound (its floor) and job 1 slowed down at small batches only (its ratio), so both contention paths are covered.
    const jobs: TransferJob[] = JOBS.map((j, i) => {
      const contend = (w: World): World =>
        i === 0
          ? { ...w, host_s: (n, r) => 0.08 * (r / n) }
          : i === 1
            ? { ...w, contention: (n, r, b) => (b <= 8 ? 1 + 0.15 * (r / n - 1) : 1) }
            : w;
      return { reference: measure(contend(referenceWorld(j, 2))), target: measure(contend(targetWorld(j, 2))) };
    });
    assert.ok(
      hostFloorCurve((jobs[0] as TransferJob).reference) && relativeContentionCurve((jobs[1] as TransferJob).reference),
    );
    for (const left of [0, 1]) {
      // bench:plan's protocol: the whole job (its multi-GPU target rows included) and the others.
      const predictions = (all: readonly TransferJob[]): number[] => {
        const job = all[left] as TransferJob;
        const { predict } = leftOutPredictor(
          job,
          all.filter((_, k) => k !== left),
        );
        return job.target
          .filter((m) => m.num_replicas > 1)
          .map((m) => predict?.(m.num_nodes, m.num_replicas, m.local_bsz) as number);
      };
      const perturbed = jobs.map((job, i) =>
        i === left
          ? {
              ...job,
              target: job.target.map((m) =>
                m.num_replicas > 1 ? { ...m, step_time_s: 3 * m.step_time_s, sync_time_s: 2 * m.sync_time_s } : m,
              ),
            }
          : job,
      );
      assert.deepEqual(predictions(perturbed), predictions(jobs));
      const otherPerturbed = jobs.map((job, i) =>
        i === 2
          ? {
              ...job,
              target: job.target.map((m) => (m.num_replicas > 1 ? { ...m, step_time_s: 3 * m.step_time_s } : m)),
            }
          : job,
      );
      assert.notDeepEqual(predictions(otherPerturbed), predictions(jobs), "the other jobs' rows are read");
    }
  });

  it("carries a job's micro-step slowdown on the reference to the target as a ratio, where one-GPU compute alone is >= 20% off", () => {
    // Job 0's replicas wait for one another at small batches: its micro-step on 4 GPUs of a node is 1.45x its one-GPU one, on both types.
    const contention = (n: number, r: number, local_bsz: number): number =>
      local_bsz <= 8 ? 1 + 0.15 * (r / n - 1) : 1;
    const contend = (w: World, i: number): World => (i === 0 ? { ...w, contention } : w);
    const jobs: TransferJob[] = JOBS.map((j, i) => ({
      reference: measure(contend(referenceWorld(j, 1), i)),
      target: measure(contend(targetWorld(j, 1), i)),
    }));
    const job = jobs[0] as TransferJob;
    assert.equal(hostFloorCurve(job.reference), undefined, 'slowed down at some shapes only: not host-bound');
    const factors = fitTypeFactors(jobs.slice(1));
    const predict = transferPredictor({ reference: job.reference, target: oneGpu(job.target) }, factors);
    // The same job without the slowdown on the reference: what the transfer predicted before it read contention.
    const unaware = transferPredictor(
      { reference: measure(referenceWorld(JOBS[0] as (typeof JOBS)[number], 1)), target: oneGpu(job.target) },
      factors,
    );
    let worstUnaware = 0;
    let worst = 0;
    for (const m of job.target.filter(
      (r) => r.num_replicas > 1 && contention(r.num_nodes, r.num_replicas, r.local_bsz) > 1.1,
    )) {
      const step = predict?.(m.num_nodes, m.num_replicas, m.local_bsz) as number;
      // Not exact: the job's reference network (its step over its one-GPU compute) still holds the slowdown, times the target's network factor.
      assert.ok(Math.abs(m.step_time_s / step - 1) < 0.1, `${JSON.stringify(m)}: predicted ${step}`);
      worst = Math.max(worst, Math.abs(m.step_time_s / step - 1));
      worstUnaware = Math.max(
        worstUnaware,
        Math.abs(m.step_time_s / (unaware?.(m.num_nodes, m.num_replicas, m.local_bsz) as number) - 1),
      );
    }
    assert.ok(worstUnaware >= 0.2 && worstUnaware > 3 * worst, `worst ${worst}; without the ratio ${worstUnaware}`);
  });

  it('counts a slowdown of at most 10% on the reference as noise, and none for a host-bound job', () => {
    const rows = (ratio: (num_replicas: number, local_bsz: number) => number): TypeMeasurement[] =>
      [1, 2, 4].flatMap((r) =>
        [8, 32].map((local_bsz) => ({
          num_nodes: 1,
          num_replicas: r,
          local_bsz,
          step_time_s: 0.01 * local_bsz * (r > 1 ? ratio(r, local_bsz) : 1),
          sync_time_s: 0,
        })),
      );
    const relative = relativeContentionCurve(rows((r, b) => (r === 4 && b === 8 ? 1.3 : 1.08)));
    assert.ok(Math.abs((relative?.(1, 4, 8) as number) - 1.3) < 1e-12);
    assert.equal(relative?.(1, 4, 32), 1);
    assert.equal(relative?.(1, 2, 8), 1);
    assert.equal(relativeContentionCurve(rows(() => 1.3)), undefined, 'host-bound: its floor, not a ratio');
  });

  it("extends a host-bound job's floor to nodes with more GPUs than the reference's, as its contention grows with GPUs per node", () => {
    // Micro-step over one GPU: 1.1 on 2 GPUs, 1.3 on 4 (the reference's largest node): +0.1 per GPU, so 1.7 on 8.
    const reference: TypeMeasurement[] = [1, 2, 4].map((r) => ({
      num_nodes: 1,
      num_replicas: r,
      local_bsz: 8,
      step_time_s: ({ 1: 1, 2: 1.1, 4: 1.3 } as Record<number, number>)[r] as number,
      sync_time_s: 0,
    }));
    // Over two nodes the wait for the slowest host hides in the sync: a micro-step of 0.8 s, shorter than one GPU's.
    reference.push({ num_nodes: 2, num_replicas: 8, local_bsz: 8, step_time_s: 2, sync_time_s: 1.2 });
    const floor = hostFloorCurve(reference);
    assert.ok(floor);
    assert.ok(Math.abs((floor(1, 4, 8) as number) - 1.3) < 1e-12);
    assert.ok(Math.abs((floor(1, 8, 8) as number) - 1.7) < 1e-12);
    assert.ok(Math.abs((floor(2, 8, 8) as number) - 1.3) < 1e-12, '4 GPUs per node: as one node of 4 measured');
    assert.ok(Math.abs((floor(4, 8, 8) as number) - 1.1) < 1e-12, '2 GPUs per node: as one node of 2 measured');
    assert.equal(floor(2, 2, 8), undefined, 'one GPU per node: its one-GPU rows on the target hold its host work');
  });

  it("Sia's rule is exact when the target is the reference slowed down uniformly", () => {
    const slower = (j: (typeof JOBS)[number], gamma: number): World => {
      const ref = referenceWorld(j, gamma);
      return { ...ref, compute_s: (b) => 2 * ref.compute_s(b), network_s: (n, r) => 2 * ref.network_s(n, r) };
    };
    for (const job of jobsOn(slower, 2)) {
      for (const m of job.target.filter((r) => r.num_replicas > 1)) {
        const sia = oneGpuRatioStep_s(m, job.reference, oneGpu(job.target)) as number;
        assert.ok(Math.abs(sia / m.step_time_s - 1) < 1e-9);
      }
    }
  });

  it('takes the nearest learned shape of the same link for a shape no other job measured', () => {
    const factors = learnTypeFactors(jobsOn(targetWorld, 1), { basis: 'step', gamma: 1 });
    const at3x12 = factorAt(factors, { num_nodes: 3, num_replicas: 12 });
    assert.deepEqual(factorAt(factors, { num_nodes: 3, num_replicas: 24 }), at3x12);
    assert.deepEqual(factorAt(factors, { num_nodes: 4, num_replicas: 16 }), at3x12);
    assert.notDeepEqual(factorAt(factors, { num_nodes: 2, num_replicas: 8 }), at3x12);
    assert.deepEqual(
      factorAt(factors, { num_nodes: 1, num_replicas: 8 }),
      factorAt(factors, { num_nodes: 1, num_replicas: 4 }),
    );
    assert.deepEqual(
      factorAt({ rule: { basis: 'sync' }, shapes: [], num_jobs: 0 }, { num_nodes: 2, num_replicas: 8 }),
      { network: 1, compute: 1 },
    );
  });

  it('interpolates a batch curve in log-log, exact on a power law, and never falls beyond its ends', () => {
    const curve = batchCurve([4, 16, 64].map((b) => ({ local_bsz: b, time_s: 0.01 * b ** 0.7 })));
    assert.ok(curve);
    for (const b of [4, 8, 30, 64]) assert.ok(Math.abs(curve(b) / (0.01 * b ** 0.7) - 1) < 1e-12);
    assert.ok(Math.abs(curve(256) / (0.01 * 256 ** 0.7) - 1) < 1e-12);
    const falling = batchCurve([
      { local_bsz: 8, time_s: 2 },
      { local_bsz: 16, time_s: 1 },
    ]);
    assert.equal(falling?.(64), 1);
    assert.equal(falling?.(2), 2);
    assert.equal(batchCurve([]), undefined);
  });
});
