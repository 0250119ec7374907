/**
 * The simulator on a cluster of several GPU types: fixed 60 s rounds, a registered policy decides
 * every job's type and nodes from each job's per-type facts (core/cluster.ts JobTypes, built by
 * model/policy-job.ts), jobs progress on their type's traces.
 */
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { gpuTypeOf, type Allocation, type ClusterSnapshot, type NodeInfo, type PolicyJob } from '../../core/cluster.js';
import { GoodputError, inputError } from '../../core/errors.js';
import type { Shape } from '../../goodput/type-transfer.js';
import { buildJobTypes } from '../../model/job-types.js';
import { buildPolicyJob } from '../../model/policy-job.js';
import type { Policy } from '../../policy/policy.js';
import { siaConfigs } from '../../policy/sia/sia.js';
import { typeGroups } from '../../policy/typed.js';
import { validateDecision } from '../../policy/validate-decision.js';
import type { SharesConfig } from '../../policy/shares/index.js';
import { numberCell, parseCsv } from '../csv.js';
import { ownerCells, SimOwners, type JobOwner } from '../sim-owners.js';
import type { JobOutcome } from '../simulator.js';
import { HeteroJob } from './hetero-job.js';
import { KeyProfiles } from './key-profiles.js';
import { typeLimits, type HeteroApplication } from './typed-app.js';

/** One type's share of a mixed cluster: `nodes` machines of `gpus_per_node` GPUs. */
export interface ClusterPart {
  type: string;
  nodes: number;
  gpus_per_node: number;
}

/**
 * Parses `aws:6x4,rtx:3x8` (type:NODESxGPUS, comma-separated) into parts. Throws E_USAGE naming
 * the bad entry.
 */
export function parseClusterSpec(spec: string): ClusterPart[] {
  const parts = spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0)
    throw new GoodputError('E_USAGE', `--cluster: empty (expected TYPE:NODESxGPUS[,...], e.g. aws:6x4,rtx:3x8)`, 2);
  const seen = new Set<string>();
  return parts.map((p) => {
    const m = /^([A-Za-z0-9._-]+):(\d+)x(\d+)$/.exec(p);
    if (!m) throw new GoodputError('E_USAGE', `--cluster: '${p}' is not TYPE:NODESxGPUS (e.g. rtx:3x8)`, 2);
    const [, type, nodes, gpus] = m;
    if (seen.has(type!)) throw new GoodputError('E_USAGE', `--cluster: type '${type}' named twice`, 2);
    seen.add(type!);
    if (Number(nodes) < 1 || Number(gpus) < 1 || Number(gpus) > 9)
      throw new GoodputError('E_USAGE', `--cluster: '${p}' needs at least one node and 1-9 GPUs per node`, 2);
    return { type: type!, nodes: Number(nodes), gpus_per_node: Number(gpus) };
  });
}

/** Typed nodes of a cluster spec, type by type in spec order. */
export function clusterNodes(parts: readonly ClusterPart[]): NodeInfo[] {
  const nodes: NodeInfo[] = [];
  for (const p of parts)
    for (let i = 0; i < p.nodes; i++)
      nodes.push({
        index: nodes.length,
        name: `${p.type}-${i}`,
        gpus: p.gpus_per_node,
        preemptible: false,
        gpu_type: p.type,
      });
  return nodes;
}

/** One row of a Sia workload (with its owner and team where the CSV has `user`/`team` columns). */
export interface HeteroWorkloadJob extends JobOwner {
  name: string;
  submit_s: number;
  app: HeteroApplication;
  line: number;
}

/** Loads a workload CSV (name,time,application[,num_replicas,batch_size][,user,team]) over `apps`. */
export function loadHeteroWorkload(file: string, apps: ReadonlyMap<string, HeteroApplication>): HeteroWorkloadJob[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new GoodputError('E_NOT_FOUND', `${file}: cannot read workload`);
  }
  const table = parseCsv(text, file, ['name', 'time', 'application']);
  const seen = new Set<string>();
  return table.rows.map((row) => {
    const name = row.cells[table.column('name')]!;
    if (seen.has(name)) throw inputError(file, row.line, `duplicate job name '${name}'`);
    seen.add(name);
    const appName = row.cells[table.column('application')]!;
    const app = apps.get(appName);
    if (!app)
      throw inputError(
        file,
        row.line,
        `application '${appName}' has no traces for every type of the cluster (known: ${[...apps.keys()].join(', ')})`,
      );
    const submit_s = numberCell(table, row, 'time', { integer: true, min: 0 });
    return { name, submit_s, app, line: row.line, ...ownerCells(file, table, row) };
  });
}

/** Outcome of a mixed-cluster simulation. */
export interface HeteroSimResult {
  policy: string;
  total_gpus: number;
  rounds: number;
  jobs: JobOutcome[];
  /** Wall time of each policy decision (ms). */
  decision_ms: number[];
  /** Per job, in workload order: the GPU type it last ran on. */
  final_types: string[];
}

/** The mixed-type simulator's round, as the Sia artifact's (s). */
export const HETERO_INTERVAL_S = 60;

/** Options of one mixed-cluster run. */
export interface HeteroSimOptions {
  interval_s?: number;
  /**
   * Whether moving a job to other nodes with the same GPUs per node restarts it (physically it
   * does). Default false: the Sia artifact's simulator, whose published results this reproduces,
   * restarts a job only when its type or placement shape changes.
   */
  strict_moves?: boolean;
  /** Stop after this many rounds (jobs left unfinished are reported with their JCT so far). */
  max_rounds?: number;
  onRound?: (now_s: number, completed: number, total: number) => void;
  /** Teams, weights, quotas and half-life of a workload whose jobs name users (issue 48). */
  shares?: SharesConfig;
  /** Called with each round's snapshot and the policy's decision (the quota shortfall follows it). */
  onDecision?: (snapshot: ClusterSnapshot, allocations: ReadonlyMap<string, Allocation>) => void;
}

/** Largest GPU count a job of `app` may use (ncf does not scale; 64 as in the artifact). */
export function jobMaxReplicas(app: HeteroApplication): number {
  if (app.name === 'ncf') return 1;
  const minLocal = Math.min(...[...app.byType.values()].map((t) => t.min_local_bsz));
  return Math.max(1, Math.min(64, Math.floor(app.base.max_batch_size / minLocal)));
}

/**
 * Runs `policy` over `workload` on `nodes` (every node typed) until every job completes.
 * Deterministic for a deterministic policy. Throws E_POLICY on an invalid decision (over-commit,
 * unknown node, a job spanning types).
 */
export function simulateHetero(
  workload: readonly HeteroWorkloadJob[],
  policy: Policy,
  nodes: readonly NodeInfo[],
  options: HeteroSimOptions = {},
): HeteroSimResult {
  const interval = options.interval_s ?? HETERO_INTERVAL_S;
  const types = [...new Set(nodes.map(gpuTypeOf))];
  // Each type's configurations (a typed policy's), where a transferred model is fitted.
  const shapes = new Map(
    types.map((t) => [
      t,
      siaConfigs(typeGroups(nodes))
        .filter((c) => c.type === t)
        .map((c): Shape => ({ num_nodes: c.nodes, num_replicas: c.gpus })),
    ]),
  );
  const profiles = policy.uses_profiles === true ? new KeyProfiles(policy.corrects_profiles !== false) : undefined;
  const jobs = workload.map(
    (w) =>
      new HeteroJob({
        name: w.name,
        app: w.app,
        submit_s: w.submit_s,
        pooled: policy.pooled_models === true,
        ...(profiles ? { profiles } : {}),
        ...(w.app.name === 'ncf' ? { fixed_batch_size: 32768 } : {}),
      }),
  );
  const appsByName = new Map(workload.map((w) => [w.app.name, w.app]));
  const activeSum = new Float64Array(jobs.length);
  const activeRounds = new Float64Array(jobs.length);
  const decision_ms: number[] = [];
  let allocations: Record<string, Allocation> = {};
  let now = 0;
  let rounds = 0;
  let completed = 0;
  const lastArrival = Math.max(...jobs.map((j) => j.submit_s));
  const maxRounds = options.max_rounds ?? Infinity;
  const strictMoves = options.strict_moves === true;
  const owners = new SimOwners(workload, options.shares);
  while (completed < jobs.length && rounds < maxRounds) {
    for (const job of jobs) {
      const was = job.completion_s;
      job.step(interval);
      if (was === null && job.completion_s !== null) completed++;
    }
    now += interval;
    rounds++;
    const at: number[] = [];
    for (let i = 0; i < jobs.length; i++) if (jobs[i]!.submit_s <= now && jobs[i]!.completion_s === null) at.push(i);
    const active = at.map((i) => jobs[i]!);
    for (const i of at) {
      activeSum[i]! += active.length;
      activeRounds[i]! += 1;
    }
    if (active.length > 0) {
      if (policy.transfers_models === true)
        profiles?.refreshTransfers(
          active.map((j) => j.app.name),
          shapes,
          (app, type) => appsByName.get(app)!.byType.get(type)!.one_gpu_samples_per_s,
        );
      const kept: Record<string, Allocation> = {};
      for (const j of active) if (allocations[j.name]?.length) kept[j.name] = allocations[j.name]!;
      owners.charge(now, at, (i) => kept[jobs[i]!.name]?.length ?? 0);
      const snapshot: ClusterSnapshot = {
        now_s: now,
        nodes,
        jobs: at.map((i) => owners.decorate(i, heteroPolicyJob(jobs[i]!, types))),
        allocations: kept,
        ...owners.snapshotShares(),
      };
      const t0 = performance.now();
      const decision = policy.decide(snapshot).allocations;
      decision_ms.push(performance.now() - t0);
      const check = validateDecision(snapshot, decision);
      if (!check.ok)
        throw new GoodputError(
          'E_POLICY',
          `policy ${policy.name} made an invalid decision at t=${now}s: ${check.reason}`,
        );
      const next: Record<string, Allocation> = {};
      for (const j of active) {
        const a = decision[j.name];
        if (a && a.length > 0) next[j.name] = [...a];
        if (!sameAllocation(kept[j.name], next[j.name])) {
          const alloc = next[j.name];
          const type = alloc ? gpuTypeOf(nodes[alloc[0]!]!) : null;
          const placement = alloc ? groupConsecutive(alloc) : [];
          // The artifact restarts a job only when its type or its GPUs per node change: a move to
          // other nodes of the same shape is free there (not physically: a real move restarts).
          const free =
            !strictMoves && kept[j.name] !== undefined && type === j.type && samePlacement(placement, j.placement);
          if (!free) j.reallocate(type, placement);
        }
      }
      allocations = next;
      if (options.onDecision) options.onDecision(snapshot, new Map(Object.entries(next)));
    }
    options.onRound?.(now, completed, jobs.length);
    if (now > lastArrival + 365 * 86400)
      throw new GoodputError(
        'E_SIM_STALLED',
        `policy ${policy.name} left ${jobs.length - completed} job(s) unfinished a year after the last arrival`,
      );
  }
  return {
    policy: policy.name,
    total_gpus: nodes.reduce((s, n) => s + n.gpus, 0),
    rounds,
    decision_ms,
    final_types: jobs.map((j) => j.type ?? 'none'),
    jobs: jobs.map((j, i) => ({
      name: j.name,
      application: j.app.name,
      submit_s: j.submit_s,
      jct_s: (j.completion_s ?? now) - j.submit_s,
      restarts: j.restarts ?? 0,
      attained_gpu_s: j.attained_gpu_s,
      avg_active_jobs: activeRounds[i]! > 0 ? activeSum[i]! / activeRounds[i]! : 1,
      ...owners.outcome(i),
    })),
  };
}

/**
 * Where the mixed-type simulator's one-GPU rates per type come from: `traces`, Sia's bootstrap
 * profile of the application (its one-GPU rate on each type, read from the traces: what the
 * published figures are made with); `models`, derived from the job's models as the control plane
 * derives them (model/job-types.ts `derivedOneGpuRates`; src/model/parity-typed.test.ts).
 */
export type OneGpuRates = 'traces' | 'models';

/**
 * The policy's view of `j`: what it knows per type, and (for a policy that reads one model) its
 * model and limits on the cluster's first type, pooled over types where the policy pools them;
 * its one-GPU rates per `one_gpu`.
 */
export function heteroPolicyJob(j: HeteroJob, types: readonly string[], one_gpu: OneGpuRates = 'traces'): PolicyJob {
  const max_profiled: Record<string, number> = {};
  const one: Record<string, number> = {};
  for (const t of types) {
    max_profiled[t] = j.maxProfiled(t);
    one[t] = j.app.byType.get(t)!.one_gpu_samples_per_s;
  }
  return buildPolicyJob({
    id: j.name,
    submitted_at_s: j.submit_s,
    attained_service_gpu_s: j.attained_gpu_s,
    min_replicas: 0,
    max_replicas: jobMaxReplicas(j.app),
    own_max_replicas: Math.max(...Object.values(max_profiled)),
    profile_key: j.app.name,
    restarts: j.restarts ?? 0,
    preemptible: true,
    priority: 0,
    limits: typeLimits(j.app, types[0]!),
    ...(j.fixed_batch_size !== undefined ? { fixed_batch_size: j.fixed_batch_size } : {}),
    model: () => j.model(types[0]!),
    progress_at_risk_s: 0,
    per_type: buildJobTypes({
      types,
      own_type: j.type ?? undefined,
      model: (t) => j.model(t),
      transferred: (t) => j.transferred(t),
      limits: (t) => typeLimits(j.app, t),
      max_profiled,
      // Sia's bootstrap profile: the application's one-GPU rate on each type, from its traces.
      ...(one_gpu === 'traces' ? { one_gpu_samples_per_s: one } : {}),
      remaining_samples: j.remaining_samples,
      restart_s: j.app.rescale_s,
      restarting: j.rescale_s > 0 && j.placement.length > 0,
    }),
  });
}

function samePlacement(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameAllocation(a: Allocation | undefined, b: Allocation | undefined): boolean {
  if (!a || !b) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Allocation list -> GPUs per node, in order of appearance (replicas on one node grouped). */
export function groupConsecutive(alloc: Allocation): number[] {
  const counts = new Map<number, number>();
  for (const n of alloc) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts.values()];
}
