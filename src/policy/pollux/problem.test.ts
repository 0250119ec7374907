import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Random } from '../../core/random.js';
import { restartFactor, type ProblemJob } from './problem-job.js';
import { PolluxProblem } from './problem.js';

const linear =
  (fair: number) =>
  (_n: number, r: number): number =>
    r / fair;

function job(over: Partial<ProblemJob> = {}): ProblemJob {
  return { speedup: linear(4), max_replicas: 64, min_replicas: 0, pinned: false, restart_factor: 1, ...over };
}

test('restart factor: max(age - 30 restarts, 0) / (age + 30)', () => {
  assert.equal(restartFactor(90, 0), 0.75);
  assert.equal(restartFactor(90, 1), 60 / 120);
  assert.equal(restartFactor(90, 3), 0);
  assert.equal(restartFactor(0, 0), 0); // a job submitted this instant gains nothing from GPUs yet
});

test('objectives on a hand-computed example', () => {
  // 2 nodes x 4 GPUs, 2 jobs: d = 1/8, r_fair = 4, scaled speedup = S * d * N = S / 4.
  const jobs = [job(), job({ restart_factor: restartFactor(90, 0) })];
  const base = Int32Array.from([2, 0, 0, 0]);
  const problem = new PolluxProblem(jobs, Int32Array.from([4, 4]), base, true);
  const out = new Float64Array(2);
  problem.evaluate(Int32Array.from([2, 0, 0, 1]), 0, out);
  const s0 = 2 / 4; // unchanged row: no penalty
  const s1 = 1 / 4; // new allocation: penalized by 90 / 120
  const mean = 2 / (1 / (s0 / 4 + 1e-3) + 1 / ((s1 / 4) * 0.75 + 1e-3));
  assert.ok(Math.abs((out[0] as number) - mean) < 1e-15, `${out[0]} vs ${mean}`);
  assert.ok(Math.abs((out[1] as number) - (s0 + s1) / 8) < 1e-15);
  // Nothing allocated: each job contributes 1 / 0.001 to the harmonic mean; utility 0.
  problem.evaluate(new Int32Array(4), 0, out);
  assert.ok(Math.abs((out[0] as number) - 1e-3) < 1e-15);
  assert.equal(out[1], 0);
  // Utility counts only the GPUs of nodes in use.
  problem.evaluate(Int32Array.from([2, 0, 1, 0]), 0, out);
  assert.ok(Math.abs((out[1] as number) - (2 / 4 + 1 / 4) / 4) < 1e-15);
});

test('repair: interference avoidance keeps the highest-priority distributed job per node', () => {
  const jobs = [job(), job(), job()];
  const state = Int32Array.from([2, 2, 0, /* job 1 */ 0, 1, 1, /* job 2 */ 0, 1, 0]);
  const avoid = new PolluxProblem(jobs, Int32Array.from([4, 4, 4]), new Int32Array(9), true);
  const x = state.slice();
  avoid.repair(x, 0, new Random(1));
  assert.deepEqual([...x], [2, 2, 0, 0, 0, 1, 0, 1, 0]);
  const noAvoid = new PolluxProblem(jobs, Int32Array.from([4, 4, 4]), new Int32Array(9), false);
  const y = state.slice();
  noAvoid.repair(y, 0, new Random(1));
  assert.deepEqual([...y], [...state]);
});

test('repair: max_replicas, node capacity in priority order, min_replicas, pinned rows', () => {
  const rng = new Random(5);
  const capped = new PolluxProblem([job({ max_replicas: 3 })], Int32Array.from([4, 4]), new Int32Array(2), true);
  for (let i = 0; i < 20; i++) {
    const x = Int32Array.from([2, 2]);
    capped.repair(x, 0, rng);
    assert.equal((x[0] as number) + (x[1] as number), 3);
  }
  const crowded = new PolluxProblem([job(), job()], Int32Array.from([4]), new Int32Array(2), true);
  const x = Int32Array.from([3, 3]);
  crowded.repair(x, 0, rng);
  assert.deepEqual([...x], [3, 1]);
  const minimum = new PolluxProblem([job({ min_replicas: 2 })], Int32Array.from([4]), new Int32Array(1), true);
  const m = Int32Array.from([1]);
  minimum.repair(m, 0, rng);
  assert.deepEqual([...m], [0]);
  // A pinned job keeps its base row and its GPUs come off the capacity first.
  const pinned = new PolluxProblem([job({ pinned: true }), job()], Int32Array.from([4]), Int32Array.from([3, 0]), true);
  const p = Int32Array.from([0, 4]);
  pinned.repair(p, 0, rng);
  assert.deepEqual([...p], [3, 1]);
});

test('mutation and crossover keep cells within node capacity after repair', () => {
  const rng = new Random(2);
  const jobs = [job(), job({ max_replicas: 2 }), job()];
  const problem = new PolluxProblem(jobs, Int32Array.from([4, 2, 4]), new Int32Array(9), true);
  const a = new Int32Array(9);
  const b = Int32Array.from([1, 0, 0, 0, 2, 0, 0, 0, 4]);
  for (let i = 0; i < 500; i++) {
    problem.crossover(a, 0, b, 0, rng);
    for (const x of [a, b]) {
      problem.mutate(x, 0, rng);
      problem.repair(x, 0, rng);
      for (let c = 0; c < 3; c++) {
        const used = (x[c] as number) + (x[3 + c] as number) + (x[6 + c] as number);
        assert.ok(used <= [4, 2, 4][c]!);
      }
      assert.ok((x[3] as number) + (x[4] as number) + (x[5] as number) <= 2);
    }
  }
});

test('evaluation right after repair (cached row/column sums) equals a fresh evaluation', () => {
  const rng = new Random(11);
  const jobs = [
    job({ speedup: (n, r) => r / 4 - 0.1 * n, max_replicas: 5 }),
    job({ min_replicas: 3, restart_factor: 0.5 }),
    job({ pinned: true }),
    job({ speedup: (n, r) => Math.sqrt(r) + n / 10, max_replicas: 2 }),
  ];
  const base = Int32Array.from([1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1]);
  const problem = new PolluxProblem(jobs, Int32Array.from([4, 3, 4, 2]), base, true);
  const fast = new Float64Array(2);
  const slow = new Float64Array(2);
  const x = new Int32Array(16);
  for (let i = 0; i < 300; i++) {
    for (let k = 0; k < 16; k++) x[k] = rng.int(0, 4);
    problem.repair(x, 0, rng);
    problem.evaluate(x, 0, fast);
    problem.evaluate(x.slice(), 0, slow);
    assert.deepEqual([...fast], [...slow]);
  }
});
