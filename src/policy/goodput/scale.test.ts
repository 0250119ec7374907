import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Random } from '../../core/random.js';
import { optimizeBatch } from '../../goodput/optimize.js';
import type { GoodputModel } from '../../goodput/types.js';
import { GoodputPolicy } from './index.js';
import type { RoundJob } from './job-view.js';
import { ranksByEstimate } from './ranks.js';
import { approxBestGoodput, lagrangianBound, SCALE_GPUS, type SizedValues } from './scale.js';
import { job, limits, nodes, perf } from './test-jobs.js';

const model: GoodputModel = { perf, grad: { sqr: 0.002, var: 0.05 }, limits };

/** Best integer value of the sizing problem by enumeration (tiny instances only). */
function bruteForce(jobs: readonly SizedValues[], gpus: number): number {
  let best = -Infinity;
  const walk = (j: number, left: number, value: number): void => {
    if (j === jobs.length) {
      best = Math.max(best, value);
      return;
    }
    const { sizes, values } = jobs[j]!;
    sizes.forEach((size, k) => {
      if (size <= left) walk(j + 1, left - size, value + values[k]!);
    });
  };
  walk(0, gpus, 0);
  return best;
}

/**
 * The relaxation's optimum the plain way: each job's upper concave hull from size 0 (by a scan
 * of every later point), its rising segments sorted by slope, the GPUs filled steepest first.
 */
function relaxation(jobs: readonly SizedValues[], gpus: number): number {
  let value = 0;
  const segments: [number, number][] = [];
  for (const { sizes, values } of jobs) {
    value += values[0]!;
    for (let k = 0; k < sizes.length - 1;) {
      let next = k + 1;
      for (let m = k + 2; m < sizes.length; m++) {
        const slope = (values[m]! - values[k]!) / (sizes[m]! - sizes[k]!);
        if (slope >= (values[next]! - values[k]!) / (sizes[next]! - sizes[k]!)) next = m;
      }
      if (values[next]! <= values[k]!) break;
      segments.push([sizes[next]! - sizes[k]!, values[next]! - values[k]!]);
      k = next;
    }
  }
  segments.sort((a, b) => b[1] / b[0] - a[1] / a[0]);
  let left = gpus;
  for (const [size, gain] of segments) {
    const taken = Math.min(size, left);
    value += (gain / size) * taken;
    left -= taken;
    if (left <= 0) break;
  }
  return value;
}

describe('goodput policy at scale', () => {
  it('the bound of 1,500 jobs is the relaxation sorted the plain way (the cut loses nothing)', () => {
    const random = new Random(11);
    for (const gpus of [1, 37, 500, 4000]) {
      const jobs: SizedValues[] = Array.from({ length: 1500 }, () => {
        const weight = random.next() ** 3;
        const sizes = [0, 1, 2, 3, 4, 8, 12, 20];
        // Concave-ish speedups with dips (a node boundary), some jobs flat after one GPU.
        const values = sizes.map((r) => (r === 0 ? 0 : weight * Math.pow(r * (0.5 + random.next()), 0.3)));
        return { sizes, values };
      });
      const expected = relaxation(jobs, gpus);
      const bound = lagrangianBound(jobs, gpus);
      assert.ok(Math.abs(bound - expected) <= 1e-9 * Math.abs(expected), `${gpus} GPUs: ${bound} vs ${expected}`);
    }
  });

  it('the approximate batch search is within 0.5% of the exact one and never above it', () => {
    for (const gradVar of [0.005, 0.05, 0.5, 5]) {
      const m = { ...model, grad: { sqr: 0.002, var: gradVar } };
      for (const [n, r] of [
        [1, 1],
        [1, 4],
        [2, 8],
        [4, 16],
        [8, 32],
        [16, 64],
      ] as const) {
        const exact = optimizeBatch(m, n, r, limits.max_batch_size).goodput;
        const approx = approxBestGoodput(m, n, r, { max_batch_size: limits.max_batch_size });
        assert.ok(approx <= exact * (1 + 1e-12), `${n}/${r}: ${approx} > ${exact}`);
        assert.ok(approx >= exact * 0.995, `${n}/${r} var ${gradVar}: ${approx} vs ${exact}`);
      }
    }
  });

  it('the bound is at least the best integer value and equal to it where values are concave', () => {
    const random = new Random(3);
    for (let trial = 0; trial < 40; trial++) {
      const jobs: SizedValues[] = Array.from({ length: 4 }, () => {
        const sizes = [0, 1, 2, 4];
        const values = [0, random.next() * 2, random.next() * 3, random.next() * 4];
        return { sizes, values };
      });
      const gpus = 1 + Math.floor(random.next() * 8);
      const bound = lagrangianBound(jobs, gpus);
      assert.ok(bound >= bruteForce(jobs, gpus) - 1e-9, `trial ${trial}`);
    }
    // Concave values and sizes of 1: the greedy optimum is the relaxation's.
    const concave = [
      { sizes: [0, 1, 2, 3], values: [0, 3, 5, 6] },
      { sizes: [0, 1, 2, 3], values: [0, 2, 3.5, 4.5] },
    ];
    assert.ok(Math.abs(lagrangianBound(concave, 3) - bruteForce(concave, 3)) < 1e-9);
    assert.ok(Math.abs(lagrangianBound(concave, 4) - bruteForce(concave, 4)) < 1e-9);
  });

  it('ranks by remaining work as the comparator sort did (ties: the later job first)', () => {
    const random = new Random(5);
    for (const n of [1, 2, 7, 200]) {
      // Few distinct estimates, so that ties are common; zeros of both signs, infinities.
      const pool = [0, -0, 1, 2.5, 1e9, Infinity, 3, 3, 7];
      const estimates = Array.from({ length: n }, () => pool[Math.floor(random.next() * pool.length)]!);
      const views = estimates.map((remaining_estimate) => ({ remaining_estimate }) as RoundJob);
      const order = estimates.map((_, i) => i).sort((a, b) => estimates[b]! - estimates[a]! || b - a);
      const expected = new Array<number>(n);
      order.forEach((index, rank) => (expected[index] = rank));
      assert.deepEqual([...ranksByEstimate(views)], expected, `n ${n}: ${estimates.join(',')}`);
    }
  });

  it('every decision reports its objective, a bound no smaller, and the gap between them', () => {
    for (const nodeCount of [4, SCALE_GPUS / 4]) {
      const jobs = Array.from({ length: 3 * nodeCount }, (_, i) =>
        job(`j${i}`, { model, max_profiled_replicas: 1 + (i % 8), remaining_samples: 1e6 * (1 + (i % 13)) }),
      );
      const d = new GoodputPolicy().decide({ now_s: 3600, nodes: nodes(nodeCount), jobs, allocations: {} });
      const diag = d.diagnostics!;
      assert.equal(diag.method, 'greedy');
      assert.ok(diag.bound! >= diag.objective! - 1e-9 * Math.abs(diag.objective!));
      assert.ok(diag.gap! >= 0 && diag.gap! < 0.05, `gap ${diag.gap} at ${nodeCount * 4} GPUs`);
    }
  });
});
