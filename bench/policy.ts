/**
 * `npm run bench:policy`: decision time of the goodput policy per scheduling round.
 * (a) Replays workload-1 (16 nodes x 4 GPUs, load 1.0) through the simulator with the policy
 *     wrapped in a timing decorator; the time includes the lazy model fits the policy triggers by
 *     reading job models, as in production.
 * (b) A generated cluster of 512 nodes x 4 GPUs with 5000 jobs drawn from the six applications of
 *     the Pollux traces (throughput models fitted on profiles of the traces, gradient statistics
 *     from the traces), random attained service, ages, profiled sizes and remaining work; the
 *     first decision starts from random allocations and the next rounds feed decisions back.
 * The policy memoizes speedups per model object across rounds, so in (b) the first round (every
 * model new) is the slow one and sets the p99; in the simulator models are refitted objects every
 * round, so (a) has no such memo.
 * Prints p50/p99 wall-clock milliseconds (and CPU milliseconds, robust to other processes) and
 * the targets (<= 50 ms p99 at 64 GPUs, <= 1 s p99 at 2048 GPUs). Deterministic inputs (seeded
 * generator). Flags: --rounds N (generated rounds, 8); --policy-param K=V (repeatable), a knob of
 * the policy timed, as in `goodput sim` (e.g. own_costates=true).
 */
import type { Allocation, ClusterSnapshot } from '../src/core/cluster.js';
import { GoodputPolicy } from '../src/policy/goodput/index.js';
import type { GoodputPolicyParams } from '../src/policy/goodput/job-view.js';
import type { Policy, PolicyDecision } from '../src/policy/policy.js';
import { percentile } from '../src/sim/metrics.js';
import { simulate } from '../src/sim/simulator.js';
import { loadWorkload } from '../src/sim/workload.js';
import { packagePath } from '../src/util/package-root.js';
import { benchArgs, goodputParamsOrExit } from './bench-args.js';
import { feedBack, generateOneType } from './generated-cluster.js';

const TARGET_P99_64_MS = 50;
const TARGET_P99_2048_MS = 1000;

const USAGE = `
usage: npm run bench:policy -- [--rounds 8] [--policy-param K=V ...]
Decision time of the goodput policy per round: workload-1 replayed (64 GPUs) and a generated
cluster of 2048 GPUs with 5000 jobs (targets: p99 <= 50 ms and <= 1 s).
`;
const values = benchArgs(USAGE, {
  rounds: { type: 'string', default: '8' },
  'policy-param': { type: 'string', multiple: true },
});
const params = goodputParamsOrExit(values['policy-param'] ?? [], '--policy-param') as Partial<GoodputPolicyParams>;

/** Records the wall-clock time of every decide() of the wrapped policy. */
class TimedPolicy implements Policy {
  readonly times_ms: number[] = [];
  /** CPU time of the process during each decide(): robust to other processes on a shared machine. */
  readonly cpu_ms: number[] = [];
  constructor(private readonly inner: Policy) {}
  get name(): string {
    return this.inner.name;
  }
  /** Forwarded, so that the replay keeps profiles as the wrapped policy asks (issue #18). */
  get uses_profiles(): boolean | undefined {
    return this.inner.uses_profiles;
  }
  get uses_network_model(): boolean | undefined {
    return this.inner.uses_network_model;
  }
  decide(snapshot: ClusterSnapshot): PolicyDecision {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const decision = this.inner.decide(snapshot);
    const used = process.cpuUsage(cpu);
    this.times_ms.push(performance.now() - start);
    this.cpu_ms.push((used.user + used.system) / 1000);
    return decision;
  }
}

function report(label: string, policy: TimedPolicy, target_ms: number): void {
  const wall = policy.times_ms;
  const p99 = percentile(wall, 99);
  console.log(
    `${label}: ${wall.length} rounds, wall p50 ${percentile(wall, 50).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${Math.max(...wall).toFixed(2)} ms, first round ${(wall[0] as number).toFixed(2)} ms (target p99 <= ${target_ms} ms: ${p99 <= target_ms ? 'met' : 'NOT met'}); CPU p50 ${percentile(policy.cpu_ms, 50).toFixed(2)} ms, p99 ${percentile(policy.cpu_ms, 99).toFixed(2)} ms`,
  );
}

// (a) Replay of workload-1 on 64 GPUs.
const replayPolicy = new TimedPolicy(new GoodputPolicy(params));
const replayStart = performance.now();
simulate(loadWorkload(packagePath('data', 'pollux', 'workloads', 'workload-1.csv')), 'goodput', replayPolicy);
console.log(
  `(a) workload-1 replay (16 x 4 GPUs), simulation ${((performance.now() - replayStart) / 1000).toFixed(1)} s wall`,
);
report('    goodput decide()', replayPolicy, TARGET_P99_64_MS);

// (b) Generated 512 x 4-GPU cluster with 5000 jobs.
const NODES = 512;
const GPUS_PER_NODE = 4;
const JOBS = 5000;
const { nodes, jobs, now_s: now0_s, allocations: initial } = generateOneType(NODES, GPUS_PER_NODE, JOBS);
let allocations: Record<string, Allocation> = initial;
const apps = [...new Set(jobs.map((j) => j.id.slice(0, j.id.lastIndexOf('-'))))].map((name) => ({ name }));
const generated = new TimedPolicy(new GoodputPolicy(params));
const rounds = Number(values.rounds);
for (let round = 0; round < rounds; round++) {
  const snapshot: ClusterSnapshot = { now_s: now0_s + round * 60, nodes, jobs, allocations };
  const decision = generated.decide(snapshot);
  allocations = decision.allocations;
  feedBack(jobs, allocations);
}
const used = Object.values(allocations).reduce((s, a) => s + a.length, 0);
console.log(
  `(b) generated cluster ${NODES} x ${GPUS_PER_NODE} GPUs, ${JOBS} jobs (${apps.map((a) => a.name).join(', ')}), ${Object.keys(allocations).length} jobs running on ${used} GPUs after the last round`,
);
report('    goodput decide()', generated, TARGET_P99_2048_MS);
