/**
 * A scheduling round's decision on a cluster of several GPU types (control/typed-nodes.ts
 * `isMixed`): the goodput policy decides as it does in the mixed-type simulator, on a
 * TypedSnapshot (control/typed-snapshot.ts) with the HiGHS solver; a type-unaware policy decides
 * as always and each job is then kept on one type (`confineToOneType`).
 */
import type { BackendNode } from '../backends/backend.js';
import { gpuTypeOf, type Allocation, type ClusterSnapshot } from '../core/cluster.js';
import type { Policy, PolicyDecision } from '../policy/policy.js';
import type { TypedJob, TypedPolicy, TypedSnapshot } from '../policy/typed.js';
import { loadHighsSolver } from '../policy/solver.js';
import type { JobRecord, StoredKeyProfile } from '../store/types.js';
import { fromOthers, gpuTypeOf as jobGpuType, type ProfileBook } from './profile-book.js';
import { confineToOneType, type TypedInventory } from './typed-nodes.js';
import { ResumingGoodputHetero } from './typed-resume.js';
import { typedJob, typedSnapshot } from './typed-snapshot.js';

/**
 * A typed policy over a live cluster whose open nodes change (a node drained, GPUs taken by other
 * work): the policy remembers each job's configuration by its position in the configurations of
 * the nodes it saw, so a new instance starts whenever their types or GPU counts change. The
 * goodput policy's instance (typed-resume.ts) then discounts a change against what each job
 * holds, so that a restart moves no job for a gain the discount would refuse.
 */
export class TypedDecider {
  private policy: TypedPolicy | undefined;
  private shape = '';

  constructor(private readonly make: () => TypedPolicy) {}

  decide(s: TypedSnapshot): Record<string, Allocation> {
    const shape = s.nodes.map((n) => `${gpuTypeOf(n)}:${n.gpus}`).join(',');
    if (!this.policy || shape !== this.shape) {
      this.policy = this.make();
      this.shape = shape;
    }
    return this.policy.decide(s);
  }

  /** Starts afresh next round (the last decision was not applied as made). */
  forget(): void {
    this.policy = undefined;
  }
}

/** The typed counterpart of a policy, for the policies that have one (goodput). */
export async function typedPolicyFor(policy: Policy): Promise<TypedDecider | undefined> {
  if (policy.name !== 'goodput') return undefined;
  const solver = await loadHighsSolver();
  return new TypedDecider(() => new ResumingGoodputHetero(solver));
}

/** What one mixed-cluster decision needs. */
export interface MixedRound {
  inv: TypedInventory;
  machines: readonly BackendNode[];
  /** Active jobs as stored (allocations on machines). */
  jobs: readonly JobRecord[];
  /** The same jobs with allocations on the policy's nodes (typed-nodes.ts `toGroups`). */
  grouped: readonly JobRecord[];
  /** The snapshot of the type-unaware path (policy nodes, grouped allocations). */
  snapshot: ClusterSnapshot;
  /** The GPU type each job's own fit is of (report-ingest.ts `fitType`), where known. */
  fit_types?: ReadonlyMap<string, string>;
  now_ms: number;
  /** Absent when the policy keeps no profiles. */
  profiles: ProfileBook | undefined;
  /** The profile each job's model starts from on its own type (ProfileBook.forRound). */
  own_profiles: ReadonlyMap<string, StoredKeyProfile>;
}

/**
 * The decision of `typed` when given, else of `policy` with every job kept on one type. A job
 * given fewer replicas than its `min_replicas` gets none: the typed policy sizes by goodput only.
 */
export async function mixedDecision(policy: Policy, typed: TypedDecider | undefined, r: MixedRound): Promise<PolicyDecision> {
  const min = new Map(r.snapshot.jobs.map((j) => [j.id, j.min_replicas]));
  if (!typed) {
    const d = policy.decide(r.snapshot);
    return { ...d, allocations: confineToOneType(r.snapshot.nodes, min, d.allocations) };
  }
  const types = [...new Set(r.inv.nodes.map(gpuTypeOf))];
  const jobs = [];
  for (let i = 0; i < r.jobs.length; i++) {
    const stored = r.jobs[i]!;
    // Its own model is of the type its fit is of (where it measured), else the type it holds.
    const placed = stored.allocation.length > 0 ? jobGpuType(stored, r.machines) : undefined;
    const own_type = stored.perf !== null ? (r.fit_types?.get(stored.id) ?? jobGpuType(stored, r.machines)) : placed;
    const profiles = r.profiles ? await r.profiles.byType(stored, types) : new Map<string, StoredKeyProfile>();
    // The round's profile of a job is that of the type it holds; its fit of another type takes that type's.
    const elsewhere = own_type !== undefined && own_type !== jobGpuType(stored, r.machines);
    const other = elsewhere ? profiles.get(own_type) : undefined;
    const own_profile = !elsewhere ? r.own_profiles.get(stored.id) : other && fromOthers(other, stored.id) ? other : undefined;
    jobs.push(typedJob({ job: r.grouped[i]!, own_type, profiles, own_profile }, types, r.now_ms));
  }
  return { allocations: decideTyped(typed, r.snapshot, jobs) };
}

/**
 * The typed policy's decision over `snapshot` (typed nodes; its jobs give `min_replicas` and
 * `preemptible`) for `jobs`, as allocations on the snapshot's nodes. Pure but for the decider's
 * memory.
 */
export function decideTyped(typed: TypedDecider, snapshot: ClusterSnapshot, jobs: readonly TypedJob[]): Record<string, Allocation> {
  const min = new Map(snapshot.jobs.map((j) => [j.id, j.min_replicas]));
  // The typed policy sizes configurations by GPUs per node: it sees only nodes with usable GPUs
  // (a node whose GPUs other work holds, or that is drained, offers none).
  const open = snapshot.nodes.filter((n) => n.gpus > 0);
  const local = new Map(open.map((n, i) => [n.index, i]));
  const held: Record<string, Allocation> = {};
  for (const [id, a] of Object.entries(snapshot.allocations)) if (a.every((n) => local.has(n))) held[id] = a.map((n) => local.get(n)!);
  const decided = typed.decide(typedSnapshot({ now_s: snapshot.now_s, allocations: held }, open.map((n, i) => ({ ...n, index: i })), jobs));
  const allocations: Record<string, Allocation> = {};
  for (const [id, a] of Object.entries(decided)) if (a.length > 0 && a.length >= (min.get(id) ?? 0)) allocations[id] = a.map((i) => open[i]!.index);
  const out = keepPinned(snapshot, allocations);
  // Where the decision was overridden, the policy's memory of each job's configuration is wrong:
  // it starts afresh next round.
  const same = (a: Allocation | undefined, b: Allocation | undefined) => (a ?? []).join() === (b ?? []).join();
  if ([...new Set([...Object.keys(out), ...Object.keys(allocations)])].some((id) => !same(out[id], allocations[id]))) typed.forget();
  return out;
}

/**
 * `allocations` with every job that may not be stopped (PolicyJob.preemptible false) on its
 * current allocation; jobs that would then over-commit a node lose theirs. The typed policy keeps
 * a job still restarting on its configuration but knows nothing of a job that may not be moved.
 */
export function keepPinned(s: ClusterSnapshot, allocations: Readonly<Record<string, Allocation>>): Record<string, Allocation> {
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
