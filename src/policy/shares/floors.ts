/**
 * The floors of the shares layer (issue 48): what each user must hold after a round, and how many
 * more devices of each type a user below its floor needs. Two floors:
 * - a team's quota of a type, bounded by what its jobs can use (entitle.ts's `guaranteed`), held
 *   by its users together;
 * - a user's fair part: its entitlement, but no more than it needs to run every job at least at
 *   its minimum size (one device), so a job of a user under its share never waits behind others.
 * Above its floors a user has no claim: the goodput policy shares the rest over all users' jobs
 * at once, which is what keeps fairness from throwing goodput away (bench:shares: protecting
 * what a user's jobs hold as well cost 12-16% in average JCT on the tuning workloads, against
 * 2% for this). Pure.
 */
import type { Allocation, PolicyJob } from '../../core/cluster.js';
import type { Entitlements } from './entitle.js';

/** Devices held now, by user, then by GPU type. */
export type HeldByType = ReadonlyMap<string, ReadonlyMap<string, number>>;

/** More devices a user needs per type to reach its floors, and whether its team's quota asks it. */
export interface FloorGap {
  user: string;
  more: Map<string, number>;
  /** Types on which the gap is (partly) its team's quota. */
  quota_types: Set<string>;
}

const sum = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((s, x) => s + x, 0);
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The gaps of `users` (the ones still free to be given a floor) against `held`: first each team's
 * quota deficit of each type, given to its users with the most entitlement left on that type;
 * then each user's fair part (`fair`: devices in all, any type) where its quota gaps leave it
 * short, on the types with the most entitlement left. Never beyond a user's entitlement of a type.
 * Users without a gap are left out; the others come most deprived first (held / entitlement),
 * ties by name.
 */
export function floorGaps(
  users: readonly string[],
  teamOfUser: ReadonlyMap<string, string>,
  held: HeldByType,
  ent: Entitlements,
  fair: ReadonlyMap<string, number>,
): FloorGap[] {
  const gaps = new Map(
    users.map((u) => [u, { user: u, more: new Map<string, number>(), quota_types: new Set<string>() }]),
  );
  const heldOf = (u: string, type: string) => held.get(u)?.get(type) ?? 0;
  const room = (u: string, type: string) =>
    (ent.by_user.get(u)?.get(type) ?? 0) - heldOf(u, type) - (gaps.get(u)?.more.get(type) ?? 0);
  const teams = [...new Set(users.map((u) => teamOfUser.get(u)!))].sort(byName);
  for (const team of teams) {
    for (const [type, quota] of [...(ent.guaranteed.get(team) ?? new Map<string, number>())].sort((a, b) =>
      byName(a[0], b[0]),
    )) {
      const members = [...teamOfUser].filter(([, t]) => t === team).map(([u]) => u);
      let deficit = quota - members.reduce((s, u) => s + heldOf(u, type), 0);
      const takers = users
        .filter((u) => teamOfUser.get(u) === team)
        .sort((a, b) => room(b, type) - room(a, type) || byName(a, b));
      for (const u of takers) {
        const k = Math.min(deficit, room(u, type));
        if (k <= 0) continue;
        const g = gaps.get(u)!;
        g.more.set(type, (g.more.get(type) ?? 0) + k);
        g.quota_types.add(type);
        deficit -= k;
      }
    }
  }
  for (const u of users) {
    const g = gaps.get(u)!;
    let short = (fair.get(u) ?? 0) - sum(held.get(u) ?? new Map()) - sum(g.more);
    const types = [...(ent.by_user.get(u) ?? new Map<string, number>()).keys()].sort(
      (a, b) => room(u, b) - room(u, a) || byName(a, b),
    );
    for (const type of types) {
      const k = Math.min(short, room(u, type));
      if (k <= 0) continue;
      g.more.set(type, (g.more.get(type) ?? 0) + k);
      short -= k;
    }
  }
  const ratio = (u: string) => sum(held.get(u) ?? new Map()) / Math.max(sum(ent.by_user.get(u) ?? new Map()), 1e-9);
  return [...gaps.values()]
    .filter((g) => sum(g.more) > 0)
    .sort((a, b) => ratio(a.user) - ratio(b.user) || byName(a.user, b.user));
}

/**
 * Grows one user's `allocations` on GPU-type `type` by up to `want` devices out of `spare` (per
 * node, only nodes of `type` are used), for a quota its policy left unused: waiting jobs start
 * first (at their minimum, at least one, when that fits), then running jobs of that type grow,
 * smallest first, each up to `demand(job)`. A running non-preemptible job is never resized (that
 * would restart it). Nodes: the job's own first, then the most spare, then by index. Mutates
 * `allocations` and `spare`; returns how many devices were added.
 */
export function topUp(
  jobs: readonly PolicyJob[],
  allocations: Record<string, Allocation>,
  spare: number[],
  typeOf: readonly string[],
  type: string,
  want: number,
  demand: (job: PolicyJob) => number,
): number {
  let added = 0;
  const room = () => spare.reduce((s, x, i) => s + (typeOf[i] === type ? x : 0), 0);
  const place = (job: PolicyJob, k: number) => {
    const own = allocations[job.id] ?? [];
    const order = spare
      .map((_, i) => i)
      .filter((i) => typeOf[i] === type && spare[i]! > 0)
      .sort(
        (a, b) =>
          own.filter((n) => n === b).length - own.filter((n) => n === a).length || spare[b]! - spare[a]! || a - b,
      );
    const grown = [...own];
    for (const i of order)
      while (k > 0 && spare[i]! > 0) {
        grown.push(i);
        spare[i]!--;
        k--;
        added++;
      }
    allocations[job.id] = grown;
  };
  const waiting = jobs.filter((j) => !(allocations[j.id]?.length ?? 0));
  for (const j of waiting) {
    const size = Math.max(1, j.min_replicas);
    if (want - added <= 0) return added;
    if (size <= room() && size <= demand(j)) place(j, size);
  }
  const running = jobs
    .filter((j) => (allocations[j.id]?.length ?? 0) > 0 && j.preemptible && typeOf[allocations[j.id]![0]!] === type)
    .sort((a, b) => allocations[a.id]!.length - allocations[b.id]!.length || (a.id < b.id ? -1 : 1));
  for (const j of running) {
    const k = Math.min(want - added, demand(j) - allocations[j.id]!.length, room());
    if (k > 0) place(j, k);
  }
  return added;
}
