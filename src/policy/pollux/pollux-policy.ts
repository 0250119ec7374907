/**
 * The Pollux policy (OSDI'21 artifact variant, pollux-spec §4.2-4.4): jobs ordered by attained
 * service, speedups rebased to each job's fair share, a restart penalty, and an NSGA-II search
 * over J x N replica matrices maximizing the fairness power mean and the cluster utility; the
 * result is the non-dominated state with the best power mean. The final front warm-starts the
 * next round.
 */
import type { Allocation, ClusterSnapshot, NodeInfo, PolicyJob } from '../../core/cluster.js';
import { Random } from '../../core/random.js';
import { bestGoodput, goodputSpeedupFn, linearSpeedupFn } from '../../goodput/speedup.js';
import type { SpeedupFn } from '../../goodput/speedup.js';
import { jobBatchPolicy } from '../job-batch.js';
import type { Policy, PolicyDecision, PolicyFactory, PolicyOptions, Rejection } from '../policy.js';
import { runNsga2 } from './nsga2.js';
import type { Nsga2Options } from './nsga2.js';
import { restartFactor, type ProblemJob } from './problem-job.js';
import { PolluxProblem } from './problem.js';

/** Tuning knobs beyond PolicyOptions (defaults: the artifact's values). */
export interface PolluxTuning {
  nsga2?: Nsga2Options;
}

/** Final front of the previous round, for the warm start. */
interface WarmStart {
  jobIds: string[];
  nodeNames: string[];
  states: Int32Array[];
}

/** A job is pinned when it is non-preemptible and already holds GPUs (pollux-spec §7). */
function isPinned(job: PolicyJob, snapshot: ClusterSnapshot): boolean {
  return !job.preemptible && (snapshot.allocations[job.id]?.length ?? 0) > 0;
}

/**
 * Pollux's replica cap: min(max(2 * max_profiled, 1), job.max_replicas, floor(max_B /
 * min_local)), where max_B is the fixed batch if any, else the model limit lowered by the
 * user's cap; then raised to min_replicas but never above job.max_replicas.
 */
export function polluxMaxReplicas(job: PolicyJob): number {
  const limits = job.limits;
  let maxB = limits.max_batch_size;
  if (job.batch_size_cap !== undefined) maxB = Math.max(limits.init_batch_size, Math.min(maxB, job.batch_size_cap));
  if (job.fixed_batch_size !== undefined) maxB = job.fixed_batch_size;
  const byBatch = Math.floor(maxB / Math.max(limits.min_local_bsz, 1));
  let cap = Math.min(Math.max(2 * job.max_profiled_replicas, 1), job.max_replicas, byBatch);
  cap = Math.min(Math.max(cap, job.min_replicas), job.max_replicas);
  return Math.max(cap, 0);
}

class PolluxPolicy implements Policy {
  readonly name = 'pollux';
  private readonly rng: Random;
  private readonly avoidInterference: boolean;
  private readonly nsga2: Nsga2Options;
  private warm: WarmStart | undefined;

  constructor(options: PolicyOptions, tuning: PolluxTuning) {
    this.rng = new Random(options.seed);
    this.avoidInterference = options.avoid_interference ?? true;
    this.nsga2 = tuning.nsga2 ?? {};
  }

  decide(snapshot: ClusterSnapshot): PolicyDecision {
    // Nodes in preference order: non-preemptible first, then by index.
    const nodes: NodeInfo[] = snapshot.nodes
      .slice()
      .sort((a, b) => Number(a.preemptible) - Number(b.preemptible) || a.index - b.index);
    const N = nodes.length;
    const column = new Map<number, number>();
    nodes.forEach((node, c) => column.set(node.index, c));
    // Jobs in priority order (stable): pinned first, then least attained service, then oldest.
    const jobs = snapshot.jobs
      .map((job, i) => ({ job, i, pinned: isPinned(job, snapshot) }))
      .sort(
        (a, b) =>
          Number(b.pinned) - Number(a.pinned) ||
          a.job.attained_service_gpu_s - b.job.attained_service_gpu_s ||
          a.job.submitted_at_s - b.job.submitted_at_s ||
          a.i - b.i,
      );
    const J = jobs.length;
    if (J === 0 || N === 0) return { allocations: pinnedOnly(snapshot) };

    const base = new Int32Array(J * N);
    jobs.forEach(({ job }, j) => {
      for (const nodeIndex of snapshot.allocations[job.id] ?? []) {
        const c = column.get(nodeIndex);
        if (c !== undefined) base[j * N + c] = (base[j * N + c] as number) + 1;
      }
    });
    const capacity = Int32Array.from(nodes, (node) => Math.max(0, Math.floor(node.gpus)));
    let totalGpus = 0;
    for (const g of capacity) totalGpus += g;

    // Fair share (pollux-spec §4.3): every replica asks for one GPU, d = 1 / total GPUs.
    const share = totalGpus > 0 ? 1 / totalGpus : 0;
    const fairReplicas = share > 0 ? Math.ceil(1 / share / J) : 1;
    const fairNodes = Math.max(1, Math.ceil(N * share));
    const problemJobs: ProblemJob[] = jobs.map(({ job, pinned }) => ({
      speedup: fairShareSpeedup(job, fairNodes, fairReplicas),
      max_replicas: polluxMaxReplicas(job),
      min_replicas: Math.max(0, job.min_replicas),
      pinned,
      restart_factor: restartFactor(snapshot.now_s - job.submitted_at_s, job.restarts),
    }));
    const problem = new PolluxProblem(problemJobs, capacity, base, this.avoidInterference);

    const jobIds = jobs.map(({ job }) => job.id);
    const nodeNames = nodes.map((node) => node.name);
    const warm = this.warm ? adaptStates(this.warm, jobIds, nodeNames) : [];
    const initial = warm.length > 0 ? warm : [base];
    const result = runNsga2(problem, initial, this.rng, this.nsga2);
    this.warm = { jobIds, nodeNames, states: result.front };

    let best = -1;
    let bestValue = -Infinity;
    result.objectives.forEach((obj, k) => {
      if ((obj[0] as number) > bestValue) {
        bestValue = obj[0] as number;
        best = k;
      }
    });
    const state = best >= 0 ? (result.front[best] as Int32Array) : base;

    const allocations: Record<string, Allocation> = {};
    const rejections: Record<string, Rejection> = {};
    // Columns in ascending node index order, so allocation lists come out in node order.
    const cols = nodes.map((node, c) => ({ index: node.index, c })).sort((a, b) => a.index - b.index);
    jobs.forEach(({ job, pinned }, j) => {
      const current = snapshot.allocations[job.id] ?? [];
      let unchanged = true;
      for (let c = 0; c < N; c++) if (state[j * N + c] !== base[j * N + c]) unchanged = false;
      // Pinned jobs, and jobs whose placement did not change, keep their list as given (a
      // reordered list would count as a restart).
      if (pinned || (unchanged && current.length > 0 && current.every((n) => column.has(n)))) {
        if (current.length > 0) allocations[job.id] = current.slice();
        return;
      }
      const list: number[] = [];
      for (const { index, c } of cols) {
        for (let k = 0; k < (state[j * N + c] as number); k++) list.push(index);
      }
      if (list.length > 0) allocations[job.id] = list;
      else {
        rejections[job.id] = {
          code: 'pollux_no_gain',
          message: 'Pollux gave this job no GPUs this round: the search found more goodput (or fairness) elsewhere.',
        };
      }
    });
    return { allocations, rejections };
  }
}

/**
 * Speedup relative to the job's fair share (n_fair nodes, r_fair replicas): goodput-based with
 * a fitted model, else linear r / r_fair (also when the fair-share goodput is not positive).
 */
function fairShareSpeedup(job: PolicyJob, fairNodes: number, fairReplicas: number): SpeedupFn {
  if (job.model) {
    const batch = jobBatchPolicy(job);
    const base = bestGoodput(job.model, fairNodes, fairReplicas, batch);
    if (base > 0 && Number.isFinite(base)) return goodputSpeedupFn(job.model, base, batch);
  }
  return linearSpeedupFn(fairReplicas);
}

/** Previous front re-indexed to the current jobs and nodes (new jobs/nodes get zeros). */
function adaptStates(warm: WarmStart, jobIds: readonly string[], nodeNames: readonly string[]): Int32Array[] {
  const J = jobIds.length;
  const N = nodeNames.length;
  const oldN = warm.nodeNames.length;
  const oldJob = new Map(warm.jobIds.map((id, j) => [id, j]));
  const oldNode = new Map(warm.nodeNames.map((name, c) => [name, c]));
  const jobMap = jobIds.map((id) => oldJob.get(id) ?? -1);
  const nodeMap = nodeNames.map((name) => oldNode.get(name) ?? -1);
  return warm.states.map((old) => {
    const state = new Int32Array(J * N);
    for (let j = 0; j < J; j++) {
      const oj = jobMap[j] as number;
      if (oj < 0) continue;
      for (let c = 0; c < N; c++) {
        const oc = nodeMap[c] as number;
        if (oc >= 0) state[j * N + c] = old[oj * oldN + oc] as number;
      }
    }
    return state;
  });
}

/** Allocations of pinned jobs only (used when there is nothing to optimize). */
function pinnedOnly(snapshot: ClusterSnapshot): Record<string, Allocation> {
  const allocations: Record<string, Allocation> = {};
  for (const job of snapshot.jobs) {
    if (isPinned(job, snapshot)) allocations[job.id] = (snapshot.allocations[job.id] ?? []).slice();
  }
  return allocations;
}

/**
 * Creates a Pollux policy with explicit tuning (tests and experiments); `polluxPolicy` is the
 * registered factory with the artifact's settings.
 */
export function createPolluxPolicy(options: PolicyOptions, tuning: PolluxTuning = {}): Policy {
  return new PolluxPolicy(options, tuning);
}

/** Pollux (OSDI'21 artifact): goodput-driven NSGA-II allocation with fair-share speedups. */
export const polluxPolicy: PolicyFactory = {
  name: 'pollux',
  job_mode: 'adaptive',
  description: 'Pollux (OSDI 2021): co-adaptive goodput scheduling via a genetic search over allocations',
  create: (options: PolicyOptions): Policy => createPolluxPolicy(options),
};
