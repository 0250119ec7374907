/**
 * GPU types in the one policy contract (policy.ts): a snapshot's nodes carry their type (one
 * type, DEFAULT_GPU_TYPE, on a cluster that names none) and its jobs what they know per type
 * (PolicyJob.per_type). Helpers here let a policy that places by type (sia, goodput on several
 * types) and a type-unaware one (fifo, tiresias, optimus) decide on any snapshot. Pure.
 */
import { DEFAULT_GPU_TYPE, gpuTypeOf } from '../core/cluster.js';
import type { Allocation, ClusterSnapshot, JobTypes, NodeInfo, PolicyJob } from '../core/cluster.js';
import { GoodputError } from '../core/errors.js';
import { oneTypeJobTypes } from '../model/job-types.js';
import type { Policy, PolicyDecision, Rejection } from './policy.js';

/** A policy job with its per-type facts, as a policy that places by type reads it. */
export type TypedJob = PolicyJob & { readonly per_type: JobTypes };

/** Per type: node indices and GPUs per node (first node's), in node order. */
export interface TypeGroup {
  type: string;
  nodes: number[];
  gpus_per_node: number;
  total_gpus: number;
}

/** The cluster's types in first-appearance order. */
export function typeGroups(nodes: readonly NodeInfo[]): TypeGroup[] {
  const out = new Map<string, TypeGroup>();
  for (const n of nodes) {
    const t = gpuTypeOf(n);
    let g = out.get(t);
    if (!g) out.set(t, (g = { type: t, nodes: [], gpus_per_node: n.gpus, total_gpus: 0 }));
    g.nodes.push(n.index);
    g.total_gpus += n.gpus;
  }
  return [...out.values()];
}

/** The type of a (one-type) allocation, or undefined for an empty one. */
export function allocationType(nodes: readonly NodeInfo[], alloc: Allocation | undefined): string | undefined {
  return alloc && alloc.length > 0 ? gpuTypeOf(nodes[alloc[0]!]!) : undefined;
}

/** Whether `nodes` hold more than one GPU type. */
export function severalTypes(nodes: readonly NodeInfo[]): boolean {
  return new Set(nodes.map(gpuTypeOf)).size > 1;
}

/** Seconds a restart is assumed to cost where a driver gave no per-type facts (the control plane's guess). */
const ASSUMED_RESTART_S = 30;

/**
 * The snapshot's jobs with their per-type facts. On one type, a job whose driver gave none gets
 * them from its policy job (model/job-types.ts `oneTypeJobTypes`; unknown remaining work: as much
 * again as its service so far, in one-GPU seconds); on several types that is an E_POLICY error
 * naming `policy` (the drivers fill them: model/job-types.ts).
 */
export function typedJobs(s: ClusterSnapshot, policy: string): TypedJob[] {
  const types = [...new Set(s.nodes.map(gpuTypeOf))];
  return s.jobs.map((j) => {
    if (j.per_type) return j as TypedJob;
    if (types.length > 1) {
      throw new GoodputError('E_POLICY', `policy ${policy} places by GPU type but job ${j.id} has no per-type facts`);
    }
    const remaining_samples = j.remaining_samples ?? Math.max(j.attained_service_gpu_s, 1);
    const facts = { remaining_samples, restart_s: ASSUMED_RESTART_S, restarting: false };
    return { ...j, per_type: oneTypeJobTypes(j, types[0] ?? DEFAULT_GPU_TYPE, facts) };
  });
}

/**
 * Keeps each job of a type-unaware policy's decision on one type: the type holding most of its
 * replicas (the first such in its allocation on a tie); the others are dropped, and a job left
 * below its `min_replicas` gets none. The slowest GPU sets the pace of every step, so a job
 * spread over two types would run at the slower one's speed. Decisions of one type pass
 * unchanged.
 */
export function confineToOneType(
  nodes: readonly NodeInfo[],
  min_replicas: ReadonlyMap<string, number>,
  allocations: Readonly<Record<string, Allocation>>,
): Record<string, Allocation> {
  const out: Record<string, Allocation> = {};
  for (const [id, alloc] of Object.entries(allocations)) {
    const count = new Map<string, number>();
    for (const n of alloc) {
      const t = gpuTypeOf(nodes[n]!);
      count.set(t, (count.get(t) ?? 0) + 1);
    }
    if (count.size <= 1) {
      out[id] = alloc;
      continue;
    }
    let best = '';
    for (const [t, c] of count) if (best === '' || c > count.get(best)!) best = t;
    const kept = alloc.filter((n) => gpuTypeOf(nodes[n]!) === best);
    if (kept.length >= (min_replicas.get(id) ?? 0)) out[id] = kept;
  }
  return out;
}

/**
 * A type-unaware policy that decides on any snapshot: its decision, with each job kept on one
 * type (`confineToOneType`; a job that then falls below its minimum is told why).
 */
export function oneTypePerJob(inner: Policy): Policy {
  const decide = (s: ClusterSnapshot): PolicyDecision => {
    const d = inner.decide(s);
    const allocations = confineToOneType(s.nodes, new Map(s.jobs.map((j) => [j.id, j.min_replicas])), d.allocations);
    const rejections: Record<string, Rejection> = { ...d.rejections };
    for (const id of Object.keys(d.allocations)) {
      if (d.allocations[id]!.length > 0 && !allocations[id]) {
        rejections[id] = {
          code: 'SPANS_TYPES',
          message: 'its GPUs would span GPU types and too few are left on one type',
        };
      }
    }
    return { allocations, rejections };
  };
  // The flags (uses_profiles, ...) are the inner policy's: a getter-free copy keeps them readonly.
  return Object.assign(Object.create(inner) as Policy, { decide });
}

/**
 * `allocations` with every job that may not be stopped (PolicyJob.preemptible false) on its
 * current allocation; jobs that would then over-commit a node lose theirs. A typed policy keeps
 * a job still restarting on its configuration but knows nothing of a job that may not be moved.
 */
export function keepPinned(
  s: ClusterSnapshot,
  allocations: Readonly<Record<string, Allocation>>,
): Record<string, Allocation> {
  const out: Record<string, Allocation> = { ...allocations };
  const pinned = new Set<string>();
  for (const j of s.jobs) {
    const current = s.allocations[j.id];
    if (!j.preemptible && current && current.length > 0) {
      out[j.id] = current;
      pinned.add(j.id);
    }
  }
  const used = s.nodes.map(() => 0);
  for (const id of pinned) for (const n of out[id]!) used[n]! += 1;
  for (const [id, a] of Object.entries(out)) {
    if (pinned.has(id)) continue;
    if (a.some((n) => used[n]! + a.filter((m) => m === n).length > s.nodes[n]!.gpus)) delete out[id];
    else for (const n of a) used[n]! += 1;
  }
  return out;
}

/** Why a job a typed policy left out got nothing. */
export const NO_CONFIGURATION: Rejection = {
  code: 'WAITING_FOR_GPUS',
  message: 'no configuration on any GPU type is free, or worth more to the cluster than those of the jobs running',
};

/**
 * A policy that places by type, over a cluster whose open nodes change (a node drained, GPUs
 * taken by other work): it sees only nodes with usable GPUs, renumbered, and a new instance
 * starts whenever their types or GPU counts change (its memory of each job's configuration is
 * by position in the configurations of the nodes it saw), and after a decision that had to be
 * overridden (a pinned job kept, a job below its minimum). Jobs it leaves out are told why.
 * On a fixed cluster with preemptible jobs (the simulators) it passes the inner decisions as made.
 */
export class OpenNodes implements Policy {
  private policy: Policy | undefined;
  private shape: string | undefined;
  readonly name: string;
  readonly uses_profiles?: boolean;
  readonly pooled_models?: boolean;
  readonly corrects_profiles?: boolean;
  readonly transfers_models?: boolean;

  constructor(private readonly make: () => Policy) {
    const first = (this.policy = make());
    this.name = first.name;
    // The drivers read the flags once, before the first round: every instance has the same.
    for (const flag of ['uses_profiles', 'pooled_models', 'corrects_profiles', 'transfers_models'] as const) {
      if (first[flag] !== undefined) Object.assign(this, { [flag]: first[flag] });
    }
  }

  decide(snapshot: ClusterSnapshot): PolicyDecision {
    const open = snapshot.nodes.filter((n) => n.gpus > 0);
    const shape = open.map((n) => `${gpuTypeOf(n)}:${n.gpus}`).join(',');
    if (!this.policy || (this.shape !== undefined && shape !== this.shape)) this.policy = this.make();
    this.shape = shape;
    const local = new Map(open.map((n, i) => [n.index, i]));
    const held: Record<string, Allocation> = {};
    for (const [id, a] of Object.entries(snapshot.allocations)) {
      if (a.every((n) => local.has(n))) held[id] = a.map((n) => local.get(n)!);
    }
    const nodes = open.map((n, i) => ({ ...n, index: i }));
    const inner = { now_s: snapshot.now_s, nodes, jobs: snapshot.jobs, allocations: held };
    const decision = this.policy!.decide(inner);
    const decided = decision.allocations;
    const min = new Map(snapshot.jobs.map((j) => [j.id, j.min_replicas]));
    const allocations: Record<string, Allocation> = {};
    for (const [id, a] of Object.entries(decided)) {
      if (a.length > 0 && a.length >= (min.get(id) ?? 0)) allocations[id] = a.map((i) => open[i]!.index);
    }
    const out = keepPinned(snapshot, allocations);
    const same = (a: Allocation = [], b: Allocation = []) => a.length === b.length && a.every((n, i) => n === b[i]);
    const ids = new Set([...Object.keys(out), ...Object.keys(allocations)]);
    if ([...ids].some((id) => !same(out[id], allocations[id]))) this.policy = undefined;
    const rejections: Record<string, Rejection> = {};
    for (const j of snapshot.jobs) if (!out[j.id]) rejections[j.id] = NO_CONFIGURATION;
    return { allocations: out, rejections, ...(decision.diagnostics ? { diagnostics: decision.diagnostics } : {}) };
  }
}
