/**
 * A scheduling round's decision on a cluster of several GPU types (control/typed-nodes.ts
 * `isMixed`): the goodput policy decides as it does in the mixed-type simulator, on a
 * TypedSnapshot (control/typed-snapshot.ts) with the HiGHS solver; a type-unaware policy decides
 * as always and each job is then kept on one type (`confineToOneType`).
 */
import type { BackendNode } from '../backends/backend.js';
import { gpuTypeOf, type Allocation, type ClusterSnapshot } from '../core/cluster.js';
import type { Policy, PolicyDecision } from '../policy/policy.js';
import { GoodputHetero } from '../policy/sia/goodput-hetero.js';
import type { TypedPolicy } from '../policy/typed.js';
import { loadHighsSolver } from '../sim/hetero/highs-solver.js';
import type { JobRecord, StoredKeyProfile } from '../store/types.js';
import { gpuTypeOf as jobGpuType, type ProfileBook } from './profile-book.js';
import { confineToOneType, type TypedInventory } from './typed-nodes.js';
import { typedJob, typedSnapshot } from './typed-snapshot.js';

/** The typed counterpart of a policy, for the policies that have one (goodput). */
export async function typedPolicyFor(policy: Policy): Promise<TypedPolicy | undefined> {
  if (policy.name !== 'goodput') return undefined;
  return new GoodputHetero(await loadHighsSolver());
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
export async function mixedDecision(policy: Policy, typed: TypedPolicy | undefined, r: MixedRound): Promise<PolicyDecision> {
  const min = new Map(r.snapshot.jobs.map((j) => [j.id, j.min_replicas]));
  if (!typed) {
    const d = policy.decide(r.snapshot);
    return { ...d, allocations: confineToOneType(r.snapshot.nodes, min, d.allocations) };
  }
  const types = [...new Set(r.inv.nodes.map(gpuTypeOf))];
  const jobs = [];
  for (let i = 0; i < r.jobs.length; i++) {
    const stored = r.jobs[i]!;
    const own_type = stored.perf !== null || stored.allocation.length > 0 ? jobGpuType(stored, r.machines) : undefined;
    const profiles = r.profiles ? await r.profiles.byType(stored, types) : new Map<string, StoredKeyProfile>();
    jobs.push(typedJob({ job: r.grouped[i]!, own_type, profiles, own_profile: r.own_profiles.get(stored.id) }, types, r.now_ms));
  }
  const decided = typed.decide(typedSnapshot(r.snapshot, r.inv.nodes, jobs));
  const allocations: Record<string, Allocation> = {};
  for (const [id, a] of Object.entries(decided)) if (a.length > 0 && a.length >= (min.get(id) ?? 0)) allocations[id] = a;
  return { allocations };
}
