/**
 * The shares layer (issue 48): a Policy that shares the cluster between people, then lets any
 * registered policy (the inner one, one instance per user) maximize goodput inside each user's
 * part. Each round:
 * 1. every user's entitlement per GPU type (entitle.ts: quotas, then weighted fair share with
 *    decayed usage, then users inside their team);
 * 2. users below their entitlement, the most deprived first, decide on their own devices plus
 *    the free devices and, where those do not suffice, the devices of users above theirs (the
 *    borrowers; only what is actually taken is reclaimed);
 * 3. the other users decide on what they keep plus every device still free (work conserving:
 *    capacity a user cannot use goes to others); a borrower whose devices were reclaimed is
 *    trimmed first (trim.ts: elastic jobs shrink before anything is stopped);
 * 4. users of step 2 that used all they were offered get what is still free.
 * With at most one owner among the jobs it is an exact pass-through to the inner policy.
 * Deterministic: users in a stable order, ties by name.
 */
import {
  DEFAULT_GPU_TYPE,
  gpuTypeOf,
  type Allocation,
  type ClusterSnapshot,
  type PolicyJob,
} from '../../core/cluster.js';
import type { Policy, PolicyDecision, Rejection } from '../policy.js';
import { entitle, type Entitlements } from './entitle.js';
import { fitToView } from './trim.js';

/** Knobs of the layer. */
export interface SharesKnobs {
  /** Exponent scale of the fair-share factor of past usage (entitle.ts); default 1. */
  usage_strength?: number;
}

/** Devices a job can use now: its current size, or its minimum, at most twice its measured reach. */
export function jobDemand(job: PolicyJob, held: number): number {
  const reach = Math.min(job.max_replicas, Math.max(1, 2 * job.max_profiled_replicas));
  return Math.max(held, job.min_replicas, reach);
}

interface Reclaim {
  team: string;
  type: string;
  quota: boolean;
}

/** The shares layer over `make()`'s policies (one per owner); see the module comment. */
export function withShares(make: () => Policy, knobs: SharesKnobs = {}): Policy {
  const first = make();
  const inner = new Map<string, Policy>();
  const instance = (user: string) => inner.get(user) ?? inner.set(user, inner.size === 0 ? first : make()).get(user)!;
  const strength = knobs.usage_strength ?? 1;
  return {
    name: first.name,
    ...(first.uses_profiles !== undefined ? { uses_profiles: first.uses_profiles } : {}),
    ...(first.uses_network_model !== undefined ? { uses_network_model: first.uses_network_model } : {}),
    ...(first.pooled_models !== undefined ? { pooled_models: first.pooled_models } : {}),
    ...(first.corrects_profiles !== undefined ? { corrects_profiles: first.corrects_profiles } : {}),
    ...(first.transfers_models !== undefined ? { transfers_models: first.transfers_models } : {}),
    decide(snapshot: ClusterSnapshot): PolicyDecision {
      const owners = [...new Set(snapshot.jobs.map((j) => j.owner ?? ''))].sort();
      if (owners.length <= 1) return instance(owners[0] ?? '').decide(snapshot);
      return shareRound(snapshot, owners, instance, strength);
    },
  };
}

function shareRound(
  snapshot: ClusterSnapshot,
  owners: readonly string[],
  instance: (user: string) => Policy,
  strength: number,
): PolicyDecision {
  const nodes = snapshot.nodes;
  const typeOf = nodes.map((n) => gpuTypeOf(n));
  const jobsOf = new Map(owners.map((u) => [u, snapshot.jobs.filter((j) => (j.owner ?? '') === u)]));
  const teamOfUser = new Map(owners.map((u) => [u, jobsOf.get(u)![0]!.team ?? u]));
  const hold = new Map(owners.map((u) => [u, new Array<number>(nodes.length).fill(0)]));
  const pinned = new Map(owners.map((u) => [u, new Array<number>(nodes.length).fill(0)]));
  for (const [u, jobs] of jobsOf)
    for (const j of jobs)
      for (const n of snapshot.allocations[j.id] ?? []) {
        hold.get(u)![n]!++;
        if (!j.preemptible) pinned.get(u)![n]!++;
      }
  const capacity = new Map<string, number>();
  nodes.forEach((n, i) => capacity.set(typeOf[i]!, (capacity.get(typeOf[i]!) ?? 0) + n.gpus));
  const demands = owners.map((u) => ({
    user: u,
    team: teamOfUser.get(u)!,
    demand: jobsOf.get(u)!.reduce((s, j) => s + jobDemand(j, snapshot.allocations[j.id]?.length ?? 0), 0),
  }));
  const ent = entitle(capacity, demands, snapshot.shares?.teams ?? [], snapshot.shares?.usage, strength);
  const byType = (per: readonly number[], type: string) => per.reduce((s, x, n) => s + (typeOf[n] === type ? x : 0), 0);
  const total = (m: Map<string, number>) => [...m.values()].reduce((s, x) => s + x, 0);
  const heldTotal = (u: string) => hold.get(u)!.reduce((s, x) => s + x, 0);
  const ratio = (u: string) => heldTotal(u) / Math.max(total(ent.by_user.get(u)!), 1e-9);
  const free = nodes.map((n, i) => Math.max(0, n.gpus - owners.reduce((s, u) => s + hold.get(u)![i]!, 0)));
  const deficit = (u: string) =>
    [...ent.by_user.get(u)!].reduce((s, [type, e]) => s + Math.max(0, e - byType(hold.get(u)!, type)), 0);
  const under = owners.filter((u) => deficit(u) > 0).sort((a, b) => ratio(a) - ratio(b) || (a < b ? -1 : 1));
  // Devices each user holds beyond its entitlement that others may take back, per type.
  const excess = new Map(
    owners.map((u) => [
      u,
      new Map([...ent.by_user.get(u)!].map(([type, e]) => [type, Math.max(0, byType(hold.get(u)!, type) - e)])),
    ]),
  );
  const reclaimed = new Map(owners.map((u) => [u, new Array<number>(nodes.length).fill(0)]));
  const why = new Map<string, Reclaim>();
  const allocations: Record<string, Allocation> = {};
  const rejections: Record<string, Rejection> = {};
  const used = new Map<string, number[]>();
  const decideFor = (u: string, view: number[]): number[] => {
    const jobs = jobsOf.get(u)!;
    const current = fitToView(jobs, snapshot.allocations, view);
    const sub: ClusterSnapshot = {
      now_s: snapshot.now_s,
      nodes: nodes.map((n, i) => ({ ...n, gpus: view[i]! })),
      jobs,
      allocations: current,
    };
    const d = instance(u).decide(sub);
    const counts = new Array<number>(nodes.length).fill(0);
    for (const j of jobs) {
      delete allocations[j.id];
      delete rejections[j.id];
      const a = d.allocations[j.id];
      if (a && a.length > 0) {
        allocations[j.id] = a;
        for (const n of a) counts[n]!++;
      }
      const r = d.rejections?.[j.id];
      if (r) rejections[j.id] = r;
    }
    return counts;
  };
  // Step 2: the deprived take free devices, then what borrowers hold beyond their entitlement.
  for (const u of under) {
    const view = [...hold.get(u)!];
    const plan = new Array<number>(nodes.length).fill(0);
    for (const [type, e] of ent.by_user.get(u)!) {
      let need = e - byType(hold.get(u)!, type);
      const order = nodes
        .map((_, i) => i)
        .filter((i) => typeOf[i] === type)
        .sort((a, b) => hold.get(u)![b]! - hold.get(u)![a]! || free[b]! - free[a]! || a - b);
      for (const i of order) {
        const k = Math.min(need, free[i]!);
        view[i]! += k;
        need -= k;
      }
      for (const v of [...owners].sort((a, b) => ratio(b) - ratio(a) || (a < b ? -1 : 1))) {
        for (const i of order) {
          if (need <= 0 || v === u) break;
          const k = Math.min(
            need,
            excess.get(v)!.get(type)!,
            hold.get(v)![i]! - pinned.get(v)![i]! - reclaimed.get(v)![i]!,
          );
          if (k <= 0) continue;
          view[i]! += k;
          plan[i]! += k;
          need -= k;
          excess.get(v)!.set(type, excess.get(v)!.get(type)! - k);
          reclaimed.get(v)![i]! += k;
        }
      }
    }
    const counts = decideFor(u, view);
    used.set(u, counts);
    // Take free devices first; give back what was planned for reclaim but not taken.
    for (let i = 0; i < nodes.length; i++) {
      const taken = Math.max(0, counts[i]! - hold.get(u)![i]!);
      const fromFree = Math.min(taken, free[i]!);
      free[i]! += Math.max(0, hold.get(u)![i]! - counts[i]!) - fromFree;
      let giveBack = plan[i]! - (taken - fromFree);
      for (const v of owners) {
        if (giveBack <= 0) break;
        const k = Math.min(giveBack, reclaimed.get(v)![i]!);
        reclaimed.get(v)![i]! -= k;
        excess.get(v)!.set(typeOf[i]!, excess.get(v)!.get(typeOf[i]!)! + k);
        giveBack -= k;
      }
      if (taken - fromFree > 0) {
        const team = teamOfUser.get(u)!;
        const q = ent.guaranteed.get(team)!.get(typeOf[i]!) ?? 0;
        const quota = q > 0 && byType(hold.get(u)!, typeOf[i]!) < q;
        for (const v of owners)
          if (reclaimed.get(v)![i]! > 0 && !why.has(v)) why.set(v, { team, type: typeOf[i]!, quota });
      }
    }
  }
  // Step 3: everyone else keeps what was not reclaimed, plus all that is free.
  for (const u of owners.filter((x) => !under.includes(x)).sort((a, b) => ratio(a) - ratio(b) || (a < b ? -1 : 1))) {
    const view = hold.get(u)!.map((h, i) => h - reclaimed.get(u)![i]! + free[i]!);
    const counts = decideFor(u, view);
    used.set(u, counts);
    for (let i = 0; i < nodes.length; i++) free[i] = view[i]! - counts[i]!;
  }
  // Step 4: the deprived that used all they were offered take what is still free.
  if (free.some((f) => f > 0))
    for (const u of under) {
      const counts = used.get(u)!;
      const view = counts.map((c, i) => c + free[i]!);
      const offered = counts.reduce((s, c) => s + c, 0);
      if (offered < total(ent.by_user.get(u)!)) continue;
      const again = decideFor(u, view);
      for (let i = 0; i < nodes.length; i++) free[i] = view[i]! - again[i]!;
    }
  return explain(snapshot, allocations, rejections, ent, teamOfUser, why);
}

/** The merged decision with the layer's words: why borrowers shrank, why over-share jobs wait. */
function explain(
  snapshot: ClusterSnapshot,
  allocations: Record<string, Allocation>,
  rejections: Record<string, Rejection>,
  ent: Entitlements,
  teamOfUser: ReadonlyMap<string, string>,
  why: ReadonlyMap<string, Reclaim>,
): PolicyDecision {
  const notes: Record<string, string> = {};
  const cluster = snapshot.nodes.reduce((s, n) => s + n.gpus, 0);
  const teamHeld = new Map<string, number>();
  const teamEnt = new Map<string, number>();
  for (const [u, m] of ent.by_user) {
    const t = teamOfUser.get(u)!;
    teamEnt.set(t, (teamEnt.get(t) ?? 0) + [...m.values()].reduce((s, x) => s + x, 0));
  }
  for (const j of snapshot.jobs) {
    const t = teamOfUser.get(j.owner ?? '')!;
    teamHeld.set(t, (teamHeld.get(t) ?? 0) + (allocations[j.id]?.length ?? 0));
  }
  for (const j of snapshot.jobs) {
    const before = snapshot.allocations[j.id]?.length ?? 0;
    const after = allocations[j.id]?.length ?? 0;
    const w = why.get(j.owner ?? '');
    if (w && after < before) {
      const verb = after === 0 ? `stopped (${before} -> 0)` : `shrank ${before} -> ${after}`;
      const n = before - after;
      const what = w.type === DEFAULT_GPU_TYPE ? `GPU${n > 1 ? 's' : ''}` : w.type;
      notes[j.id] = `${verb} to return ${n} ${what} to team ${w.team}'s ${w.quota ? 'quota' : 'fair share'}`;
    }
    if (after === 0) {
      const t = teamOfUser.get(j.owner ?? '')!;
      const held = teamHeld.get(t) ?? 0;
      const share = ent.team_share.get(t) ?? 0;
      // Waiting because its team holds (at least) its share, while others are below theirs.
      if (cluster > 0 && held > 0 && held >= (teamEnt.get(t) ?? 0) && share < 1) {
        const pct = (x: number) => Math.round(100 * x);
        const over = held / cluster > share + 1e-9;
        rejections[j.id] = {
          code: 'FAIR_SHARE',
          message:
            `team ${t} ${over ? 'is over' : 'holds'} its fair share ` +
            `(${pct(held / cluster)}% of the cluster for a share of ${pct(share)}%)`,
        };
      }
    }
  }
  return { allocations, rejections, notes };
}
