import type { Allocation, ClusterSnapshot, NodeInfo } from '../core/cluster.js';
import { GoodputError } from '../core/errors.js';
import type { Policy } from '../policy/policy.js';
import { validateDecision } from '../policy/validate-decision.js';
import { jobModeFor, polluxHooks, type JobMode } from './job-modes.js';
import { SimProfileStore } from './profile-store.js';
import { OracleCache, policyJob } from './policy-jobs.js';
import { SimJob } from './sim-job.js';
import type { Workload, WorkloadJob } from './workload.js';
import type { SharesConfig } from '../policy/shares/index.js';
import { SimOwners } from './sim-owners.js';

/** Cluster and clock settings of one simulation. Defaults are the artifact's. */
export interface SimOptions {
  /** Scheduling interval (s); default 60. */
  interval_s?: number;
  /** Progress slowdown in [0, 1) of multi-node jobs sharing a node; default 0. */
  interference?: number;
  /** Default 16. */
  nodes?: number;
  /** 1..4 (the traces stop at 4 GPUs per node); default 4. */
  gpus_per_node?: number;
  /** Called after every round (cheap; throttle in the caller). */
  onRound?: (progress: RoundProgress) => void;
  /** Called with the log record of every interval (§1.9), for --out. */
  onInterval?: (record: IntervalRecord) => void;
  /**
   * Teams, weights, quotas and half-life of a workload whose jobs name users (issue 48); absent:
   * every user is their own team of weight 1. Decayed usage is kept on simulated time.
   */
  shares?: SharesConfig;
  /** Called after every decision with the round's snapshot and the allocations decided. */
  onDecision?: (snapshot: ClusterSnapshot, allocations: ReadonlyMap<string, Allocation>) => void;
}

/** Progress of a running simulation. */
export interface RoundProgress {
  now_s: number;
  last_arrival_s: number;
  completed: number;
  total: number;
}

/** One job in an interval log record. */
export interface IntervalJobRecord {
  name: string;
  epoch: number;
  progress: number;
  restarts: number;
  allocation: Allocation;
  placement: readonly number[];
  batch_size: number;
  accum_steps: number;
  submission_time: number;
  completion_time: number | null;
  grad_params: readonly [number, number] | null;
}

/** The state at the end of one interval: jobs active during it (completed ones included). */
export interface IntervalRecord {
  timestamp: number;
  num_nodes: number;
  gpus_per_node: number;
  jobs: IntervalJobRecord[];
}

/** Outcome of one job. */
export interface JobOutcome {
  name: string;
  application: string;
  submit_s: number;
  jct_s: number;
  restarts: number;
  attained_gpu_s: number;
  /** Time-average number of active jobs over the rounds this job was active (>= 1). */
  avg_active_jobs: number;
  /** Owner and team (workloads with a `user` column). */
  user?: string;
  team?: string;
}

/** Outcome of a whole simulation. */
export interface SimResult {
  policy: string;
  mode: JobMode;
  total_gpus: number;
  jobs: JobOutcome[];
  /** Number of scheduling rounds simulated. */
  rounds: number;
}

/** Resolved options, shared with the fairness estimate. */
export interface ResolvedSimOptions {
  interval_s: number;
  interference: number;
  nodes: number;
  gpus_per_node: number;
}

/** Applies defaults and validates ranges (usage errors name the flag). */
export function resolveSimOptions(options: SimOptions): ResolvedSimOptions {
  const o = {
    interval_s: options.interval_s ?? 60,
    interference: options.interference ?? 0,
    nodes: options.nodes ?? 16,
    gpus_per_node: options.gpus_per_node ?? 4,
  };
  const bad = (msg: string) => new GoodputError('E_USAGE', msg, 2);
  if (!Number.isInteger(o.interval_s) || o.interval_s < 1)
    throw bad(`--interval must be a positive integer number of seconds, got ${o.interval_s}`);
  if (!(o.interference >= 0 && o.interference < 1))
    throw bad(`--interference must be in [0, 1), got ${o.interference}`);
  if (!Number.isInteger(o.nodes) || o.nodes < 1) throw bad(`--nodes must be a positive integer, got ${o.nodes}`);
  if (!Number.isInteger(o.gpus_per_node) || o.gpus_per_node < 1 || o.gpus_per_node > 4)
    throw bad(`--gpus-per-node must be 1..4 (the traces cover up to 4 GPUs per node), got ${o.gpus_per_node}`);
  return o;
}

/** Smallest GPU count a job needs under `mode` (gang size for gang policies, else 1). */
export function minimumGpus(job: WorkloadJob, mode: JobMode): number {
  return mode === 'gang' ? job.num_replicas : 1;
}

/**
 * Builds the simulated job for `mode` (which batch rule it follows). With `profiles` (adaptive
 * mode only), the job's profile key is its application's name, as a user would tag it.
 */
export function makeSimJob(w: WorkloadJob, mode: JobMode, profiles?: SimProfileStore): SimJob {
  const isNcf = w.application.name === 'ncf';
  const adaptive = mode === 'adaptive';
  const target = adaptive ? (isNcf ? 32768 : undefined) : w.batch_size;
  const profile = adaptive && profiles ? { profile: { key: w.application.name, store: profiles } } : {};
  return new SimJob({
    name: w.name,
    application: w.application,
    submit_s: w.submit_s,
    target_batch_size: target,
    hooks: adaptive ? polluxHooks : undefined,
    ...profile,
  });
}

/**
 * Runs `policy` over `workload` with the fixed-interval loop of pollux-spec §1.2 until every job
 * completes. Deterministic for a deterministic policy. Throws E_CLUSTER_TOO_SMALL when a job's
 * minimum cannot fit the cluster, E_POLICY when a decision fails validateDecision (unknown job
 * or node, over-commit).
 */
export function simulate(workload: Workload, policyName: string, policy: Policy, options: SimOptions = {}): SimResult {
  const o = resolveSimOptions(options);
  const mode = jobModeFor(policyName);
  const totalGpus = o.nodes * o.gpus_per_node;
  for (const w of workload.jobs) {
    const need = minimumGpus(w, mode);
    if (need > totalGpus) {
      throw new GoodputError(
        'E_CLUSTER_TOO_SMALL',
        `${workload.file}:${w.line}: job ${w.name} needs ${need} GPUs under ${policyName} but the cluster has ${totalGpus} ` +
          `(${o.nodes} nodes x ${o.gpus_per_node} GPUs); use a larger --nodes or --gpus-per-node.`,
      );
    }
  }
  const nodes: NodeInfo[] = Array.from({ length: o.nodes }, (_, i) => ({
    index: i,
    name: `node-${i}`,
    gpus: o.gpus_per_node,
    preemptible: false,
  }));
  // Profiles are a capability the policy declares; other policies keep their published behaviour.
  const profiles =
    mode === 'adaptive' && policy.uses_profiles === true
      ? new SimProfileStore(polluxHooks.fit, policy.uses_network_model === true)
      : undefined;
  const jobs = workload.jobs.map((w) => makeSimJob(w, mode, profiles));
  const oracle = new OracleCache(o.gpus_per_node, totalGpus);
  const activeSum = new Float64Array(jobs.length);
  const activeRounds = new Float64Array(jobs.length);
  const lastArrival = latestSubmission(jobs);
  let allocations = new Map<string, Allocation>();
  let now = 0;
  let rounds = 0;
  let completed = 0;
  const stallLimit = lastArrival + 365 * 86400;
  const owners = new SimOwners(workload.jobs, options.shares);
  while (completed < jobs.length) {
    const interfering = o.interference > 0 ? interferingNodes(allocations) : undefined;
    for (const job of jobs) {
      let x = 0;
      if (interfering) {
        const alloc = allocations.get(job.name);
        if (alloc && new Set(alloc).size > 1 && alloc.some((n) => interfering.has(n))) x = o.interference;
      }
      const wasDone = job.completion_s !== null;
      job.step(o.interval_s, x);
      if (!wasDone && job.completion_s !== null) completed++;
    }
    now += o.interval_s;
    rounds++;
    if (profiles) for (const job of jobs) if (job.submit_s <= now) job.reportProfile();
    const active: number[] = [];
    for (let i = 0; i < jobs.length; i++)
      if (jobs[i]!.submit_s <= now && jobs[i]!.completion_s === null) active.push(i);
    for (const i of active) {
      activeSum[i]! += active.length;
      activeRounds[i]! += 1;
    }
    const logged = options.onInterval
      ? jobs.filter((j) => j.submit_s <= now && (j.completion_s === null || j.completion_s >= now - o.interval_s))
      : [];
    if (active.length > 0) {
      const kept = new Map<string, Allocation>();
      for (const i of active) {
        const a = allocations.get(jobs[i]!.name);
        if (a) kept.set(jobs[i]!.name, a);
      }
      owners.charge(now, active, (i) => kept.get(jobs[i]!.name)?.length ?? 0);
      const snapshot: ClusterSnapshot = {
        now_s: now,
        nodes,
        jobs: active.map((i) => owners.decorate(i, policyJob(jobs[i]!, workload.jobs[i]!, mode, totalGpus, oracle))),
        allocations: Object.fromEntries(kept),
        ...owners.snapshotShares(),
      };
      const decision = policy.decide(snapshot);
      const check = validateDecision(snapshot, decision.allocations);
      if (!check.ok)
        throw new GoodputError(
          'E_POLICY',
          `policy ${policyName} made an invalid decision at t=${now}s: ${check.reason}`,
        );
      const next = new Map<string, Allocation>();
      for (const i of active) {
        const name = jobs[i]!.name;
        const a = decision.allocations[name];
        if (a && a.length > 0) next.set(name, [...a]);
      }
      for (const i of active) {
        const job = jobs[i]!;
        const before = kept.get(job.name);
        const after = next.get(job.name);
        if (!sameAllocation(before, after)) job.reallocate(after ? groupConsecutive(after) : [], now);
      }
      allocations = next;
      options.onDecision?.(snapshot, next);
    }
    if (options.onInterval) options.onInterval(intervalRecord(now, o.nodes, o.gpus_per_node, logged, allocations));
    options.onRound?.({ now_s: now, last_arrival_s: lastArrival, completed, total: jobs.length });
    if (now > stallLimit)
      throw new GoodputError(
        'E_SIM_STALLED',
        `policy ${policyName} left ${jobs.length - completed} job(s) unfinished a year after the last arrival; it never allocates them.`,
      );
  }
  return {
    policy: policyName,
    mode,
    total_gpus: totalGpus,
    rounds,
    jobs: jobs.map((j, i) => ({
      name: j.name,
      application: j.app.name,
      submit_s: j.submit_s,
      jct_s: j.completion_s! - j.submit_s,
      restarts: j.restarts ?? 0,
      attained_gpu_s: j.attained_gpu_s,
      avg_active_jobs: activeRounds[i]! > 0 ? activeSum[i]! / activeRounds[i]! : 1,
      ...owners.outcome(i),
    })),
  };
}

/**
 * The latest submission time of `jobs` (-Infinity for none). A loop, not Math.max(...): a spread
 * of over about 120,000 arguments overflows the stack (a day at 16,384 GPUs has 122,880 jobs).
 */
export function latestSubmission(jobs: readonly { submit_s: number }[]): number {
  let latest = -Infinity;
  for (const j of jobs) if (j.submit_s > latest) latest = j.submit_s;
  return latest;
}

/** Nodes hosting replicas of at least two multi-node jobs (§1.2 step 1). */
function interferingNodes(allocations: ReadonlyMap<string, Allocation>): Set<number> {
  const count = new Map<number, number>();
  for (const alloc of allocations.values()) {
    const distinct = new Set(alloc);
    if (distinct.size <= 1) continue;
    for (const n of distinct) count.set(n, (count.get(n) ?? 0) + 1);
  }
  return new Set([...count].filter(([, c]) => c > 1).map(([n]) => n));
}

function sameAllocation(a: Allocation | undefined, b: Allocation | undefined): boolean {
  if (!a || !b) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Allocation list -> placement: runs of equal consecutive node ids (§1.2 step 5). */
export function groupConsecutive(alloc: Allocation): number[] {
  const out: number[] = [];
  for (let i = 0; i < alloc.length; i++) {
    if (i === 0 || alloc[i] !== alloc[i - 1]) out.push(1);
    else out[out.length - 1]! += 1;
  }
  return out;
}

function intervalRecord(
  now: number,
  numNodes: number,
  gpusPerNode: number,
  jobs: readonly SimJob[],
  allocations: ReadonlyMap<string, Allocation>,
): IntervalRecord {
  return {
    timestamp: now,
    num_nodes: numNodes,
    gpus_per_node: gpusPerNode,
    jobs: jobs.map((j) => ({
      name: j.name,
      epoch: j.epoch,
      progress: j.progress,
      restarts: j.restarts ?? 0,
      allocation: allocations.get(j.name) ?? [],
      placement: j.placement,
      batch_size: j.batch_size,
      accum_steps: j.accum_steps,
      submission_time: j.submit_s,
      completion_time: j.completion_s,
      grad_params: j.grad,
    })),
  };
}
