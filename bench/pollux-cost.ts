/**
 * `npm run bench:pollux-cost`: cost of the Pollux policy and of the throughput fit, the two hot
 * paths of a Pollux simulation (one decide() per simulated minute, one fit per newly profiled
 * configuration). Prints CPU milliseconds (process.cpuUsage, robust to other processes on the
 * machine) next to the targets, and the Tiresias decide() on the same snapshots as a baseline.
 * Synthetic inputs: jobs with cifar10-like fitted models on 16 nodes x 4 GPUs.
 */
import type { Allocation, ClusterSnapshot, PolicyJob } from '../src/core/cluster.js';
import { fitPerfParams } from '../src/goodput/fit.js';
import { accumStepTime_s, optimStepTime_s } from '../src/goodput/throughput.js';
import type { GoodputModel, PerfParams, ProfilePoint } from '../src/goodput/types.js';
import { findPolicy } from '../src/policy/registry.js';
import { benchArgs } from './bench-args.js';

benchArgs(
  `
usage: npm run bench:pollux-cost
CPU cost of the Pollux policy's decide() and of the throughput fit.
`,
  {},
);

const TARGET_DECIDE_MS = 30;
const TARGET_FIT_MS = 1;
const ROUNDS = 20;

const limits: GoodputModel['limits'] = {
  init_batch_size: 128,
  max_batch_size: 4096,
  min_local_bsz: 32,
  max_local_bsz: 1024,
  accumulation: true,
};
const perf: PerfParams = {
  alpha_c: 0.003187,
  beta_c: 0.000781,
  alpha_n: 0.026517,
  beta_n: 0.002843,
  alpha_r: 0.011409,
  beta_r: 0.000398,
  gamma: 1.16224,
};

function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function jobs(count: number): PolicyJob[] {
  return Array.from({ length: count }, (_, j) => ({
    id: `job${j}`,
    submitted_at_s: j * 100,
    attained_service_gpu_s: j * 37,
    min_replicas: 0,
    max_replicas: 64,
    max_profiled_replicas: 1 + (j % 8),
    restarts: j % 3,
    preemptible: true,
    priority: 0,
    limits,
    remaining_steps: 10_000,
    step_time_s_by_replicas: Array.from({ length: 64 }, (_, r) => 0.2 / Math.pow(r + 1, 0.8)),
    ...(j % 4 === 3 ? {} : { model: { perf, grad: { sqr: 0.57 / (1 + j), var: 1.45 }, limits } }),
  }));
}

/** Median CPU ms of decide() over ROUNDS rounds after 2 warm-up rounds, decisions fed back. */
function benchDecide(policyName: string, jobCount: number): number {
  const factory = findPolicy(policyName);
  if (!factory) throw new Error(`policy ${policyName} is not registered`);
  const policy = factory.create({ seed: 1 });
  const nodes = Array.from({ length: 16 }, (_, index) => ({ index, name: `n${index}`, gpus: 4, preemptible: false }));
  const list = jobs(jobCount);
  let allocations: Record<string, Allocation> = {};
  const times: number[] = [];
  for (let round = 0; round < ROUNDS + 2; round++) {
    const snapshot: ClusterSnapshot = { now_s: 3000 + round * 60, nodes, jobs: list, allocations };
    const ms = cpuMs(() => {
      allocations = policy.decide(snapshot).allocations;
    });
    if (round >= 2) times.push(ms);
  }
  return median(times);
}

function profile(count: number): ProfilePoint[] {
  const truth: PerfParams = {
    alpha_c: 0.02,
    beta_c: 0.0005,
    alpha_n: 0.05,
    beta_n: 0.004,
    alpha_r: 0.01,
    beta_r: 0.001,
    gamma: 1.5,
  };
  const shapes = [
    [1, 1],
    [1, 2],
    [1, 4],
    [2, 4],
    [2, 8],
    [4, 16],
    [3, 12],
    [8, 32],
  ] as const;
  const points: ProfilePoint[] = [];
  for (let i = 0; points.length < count; i++) {
    const [n, r] = shapes[i % shapes.length] as readonly [number, number];
    const b = 32 + 17 * i;
    const noise = 1 + 0.02 * Math.sin(i * 12.9898);
    points.push({
      num_nodes: n,
      num_replicas: r,
      local_bsz: b,
      accum_step_time_s: accumStepTime_s(truth, b) * noise,
      optim_step_time_s: optimStepTime_s(truth, n, r, b) * noise,
    });
  }
  return points;
}

console.log(`fitPerfParams, mean CPU ms per fit (target < ${TARGET_FIT_MS} ms)`);
for (const count of [1, 4, 15, 30]) {
  const points = profile(count);
  const reps = 1000;
  for (let i = 0; i < 1000; i++) fitPerfParams(points); // JIT warm-up
  const ms = cpuMs(() => {
    for (let i = 0; i < reps; i++) fitPerfParams(points);
  });
  console.log(`${String(count).padStart(3)} points: ${(ms / reps).toFixed(3)} ms`);
}

console.log(
  `\npolicy decide() on 16 nodes x 4 GPUs, median CPU ms over ${ROUNDS} rounds (target <= ${TARGET_DECIDE_MS} ms)`,
);
console.log('jobs  pollux  tiresias(baseline)');
for (const count of [4, 12, 20]) {
  const pollux = benchDecide('pollux', count);
  const tiresias = benchDecide('tiresias', count);
  console.log(`${String(count).padStart(4)}  ${pollux.toFixed(1).padStart(6)}  ${tiresias.toFixed(2).padStart(8)}`);
}
