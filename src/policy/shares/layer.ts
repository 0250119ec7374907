/**
 * The shares layer (issue 48): a Policy that shares the cluster between people, then lets any
 * registered policy maximize goodput over everyone's jobs at once. Each round:
 * 1. every user's entitlement per GPU type (entitle.ts: quotas, then weighted fair share with
 *    decayed usage, then users inside their team);
 * 2. users below a floor now (floors.ts: their team's quota, their fair part), the most deprived
 *    first, decide with their own policy instance on their devices plus the missing ones: free
 *    devices, then devices of users above their entitlement (a non-preemptible job's never); a
 *    quota left unused by that decision is filled (floors.ts topUp);
 * 3. the one shared instance (the inner policy, as without users) decides every other job on what
 *    is left; a user whose devices were taken is trimmed first (trim.ts: elastic jobs shrink
 *    before anything is stopped);
 * 4. users that decision left below a floor go through 2 and 3 again, once each at most;
 * 5. users held to a floor that used all they were offered take what is still free.
 * Where no floor binds, the decision is the inner policy's own (fairness costs no goodput then).
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
import { floorGaps, topUp } from './floors.js';
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

/** Devices the layer took from one user this round, and for whom (the first taker names it). */
interface Reclaim {
  team: string;
  type: string;
  quota: boolean;
  /** How many: a shrink beyond them is the inner policy's own and gets no note. */
  taken: number;
}

/**
 * The shares layer over `make()`'s policies: the first one decides as without users (and passes
 * a one-owner snapshot through), one more per user held to a floor; see the module comment.
 */
export function withShares(make: () => Policy, knobs: SharesKnobs = {}): Policy {
  const first = make();
  const inner = new Map<string, Policy>();
  const instance = (user: string) => inner.get(user) ?? inner.set(user, make()).get(user)!;
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
      if (owners.length <= 1) return first.decide(snapshot);
      return shareRound(snapshot, owners, instance, first, strength);
    },
  };
}

function shareRound(
  snapshot: ClusterSnapshot,
  owners: readonly string[],
  instance: (user: string) => Policy,
  blind: Policy,
  strength: number,
): PolicyDecision {
  const nodes = snapshot.nodes;
  const typeOf = nodes.map((n) => gpuTypeOf(n));
  const jobsOf = new Map(owners.map((u) => [u, snapshot.jobs.filter((j) => (j.owner ?? '') === u)]));
  const teamOfUser = new Map(owners.map((u) => [u, jobsOf.get(u)![0]!.team ?? u]));
  const heldBefore = (j: PolicyJob) => snapshot.allocations[j.id]?.length ?? 0;
  const capacity = new Map<string, number>();
  nodes.forEach((n, i) => capacity.set(typeOf[i]!, (capacity.get(typeOf[i]!) ?? 0) + n.gpus));
  const demands = owners.map((u) => ({
    user: u,
    team: teamOfUser.get(u)!,
    demand: jobsOf.get(u)!.reduce((s, j) => s + jobDemand(j, heldBefore(j)), 0),
  }));
  const ent = entitle(capacity, demands, snapshot.shares?.teams ?? [], snapshot.shares?.usage, strength);
  const total = (m: ReadonlyMap<string, number>) => [...m.values()].reduce((s, x) => s + x, 0);
  // A user's fair part: its entitlement, up to running every job at its minimum (floors.ts).
  const fair = new Map(
    owners.map((u) => [
      u,
      Math.min(
        total(ent.by_user.get(u)!),
        jobsOf.get(u)!.reduce((s, j) => s + Math.max(1, j.min_replicas), 0),
      ),
    ]),
  );
  const before = new Map(owners.map((u) => [u, new Array<number>(nodes.length).fill(0)]));
  for (const [u, jobs] of jobsOf)
    for (const j of jobs) for (const n of snapshot.allocations[j.id] ?? []) before.get(u)![n]!++;
  const allocations: Record<string, Allocation> = {};
  const rejections: Record<string, Rejection> = {};
  const decideOn = (policy: Policy, jobs: readonly PolicyJob[], view: readonly number[]) => {
    const d = policy.decide({
      now_s: snapshot.now_s,
      nodes: nodes.map((n, i) => ({ ...n, gpus: view[i]! })),
      jobs,
      allocations: fitToView(jobs, snapshot.allocations, view),
    });
    for (const j of jobs) {
      delete allocations[j.id];
      delete rejections[j.id];
      const a = d.allocations[j.id];
      if (a && a.length > 0) allocations[j.id] = a;
      const r = d.rejections?.[j.id];
      if (r) rejections[j.id] = r;
    }
  };
  const countsOf = (u: string) => {
    const c = new Array<number>(nodes.length).fill(0);
    for (const j of jobsOf.get(u)!) for (const n of allocations[j.id] ?? []) c[n]!++;
    return c;
  };
  const byType = (per: readonly number[], type: string) => per.reduce((s, x, n) => s + (typeOf[n] === type ? x : 0), 0);
  const heldByType = (counts: ReadonlyMap<string, number[]>) =>
    new Map(owners.map((u) => [u, new Map([...capacity.keys()].map((t) => [t, byType(counts.get(u)!, t)]))]));

  // Floors first for users below them now; then goodput over every other job at once, as without
  // users; then floors again for anyone that decision left short.
  const floored = new Map<string, number[]>();
  const offered = new Map<string, number>();
  const why = new Map<string, Reclaim>();
  for (let pass = 0; pass <= owners.length; pass++) {
    const source = pass === 0 ? snapshot.allocations : allocations;
    const counts =
      pass === 0 ? new Map([...before].map(([u, c]) => [u, [...c]])) : new Map(owners.map((u) => [u, countsOf(u)]));
    const open = owners.filter((u) => !floored.has(u));
    const gaps = floorGaps(open, teamOfUser, heldByType(counts), ent, fair);
    if (pass > 0 && gaps.length === 0) break;
    const free = nodes.map((n, i) => n.gpus - owners.reduce((s, u) => s + counts.get(u)![i]!, 0));
    // Devices of others above their entitlement of a type, which a user below its floor may take.
    const over = new Map(
      open.map((v) => [
        v,
        new Map([...capacity.keys()].map((t) => [t, byType(counts.get(v)!, t) - (ent.by_user.get(v)!.get(t) ?? 0)])),
      ]),
    );
    // A non-preemptible job's devices are never taken.
    const pinned = new Map(
      open.map((v) => {
        const c = new Array<number>(nodes.length).fill(0);
        for (const j of jobsOf.get(v)!) if (!j.preemptible) for (const n of source[j.id] ?? []) c[n]!++;
        return [v, c];
      }),
    );
    for (const gap of gaps) {
      const u = gap.user;
      const view = counts.get(u)!;
      for (const [type, more] of gap.more) {
        let need = more;
        const order = nodes
          .map((_, i) => i)
          .filter((i) => typeOf[i] === type)
          .sort(
            (a, b) => before.get(u)![b]! - before.get(u)![a]! || view[b]! - view[a]! || free[b]! - free[a]! || a - b,
          );
        for (const i of order) {
          const k = Math.min(need, free[i]!);
          view[i]! += k;
          free[i]! -= k;
          need -= k;
        }
        const givers = open
          .filter((v) => v !== u && !gaps.some((g) => g.user === v) && over.get(v)!.get(type)! > 0)
          .sort((a, b) => over.get(b)!.get(type)! - over.get(a)!.get(type)! || (a < b ? -1 : 1));
        for (const v of givers)
          for (const i of order) {
            const k = Math.min(need, over.get(v)!.get(type)!, counts.get(v)![i]! - pinned.get(v)![i]!);
            if (k <= 0) continue;
            view[i]! += k;
            counts.get(v)![i]! -= k;
            over.get(v)!.set(type, over.get(v)!.get(type)! - k);
            need -= k;
            const w = why.get(v) ?? { team: teamOfUser.get(u)!, type, quota: gap.quota_types.has(type), taken: 0 };
            w.taken += k;
            why.set(v, w);
          }
      }
      decideOn(instance(u), jobsOf.get(u)!, view);
      // A quota its policy left unused (it would not grow a job it could grow) is filled anyway.
      for (const type of gap.quota_types) {
        const team = teamOfUser.get(u)!;
        const teamHeld = owners
          .filter((v) => teamOfUser.get(v) === team)
          .reduce((s, v) => s + byType(v === u ? countsOf(u) : counts.get(v)!, type), 0);
        const want = (ent.guaranteed.get(team)!.get(type) ?? 0) - teamHeld;
        const mine = countsOf(u);
        const spare = view.map((x, i) => x - mine[i]!);
        if (want > 0) topUp(jobsOf.get(u)!, allocations, spare, typeOf, type, want, (j) => jobDemand(j, heldBefore(j)));
      }
      const used = countsOf(u);
      floored.set(u, used);
      offered.set(
        u,
        view.reduce((s, x) => s + x, 0),
      );
      for (let i = 0; i < nodes.length; i++) free[i]! += view[i]! - used[i]!;
    }
    // The others share what the floors left, by goodput again.
    const rest = snapshot.jobs.filter((j) => !floored.has(j.owner ?? ''));
    if (rest.length > 0)
      decideOn(
        blind,
        rest,
        nodes.map((n, i) => n.gpus - [...floored.values()].reduce((s, c) => s + c[i]!, 0)),
      );
  }
  // Users held to a floor that used all they were offered take what is still free.
  const final = owners.map(countsOf);
  const left = nodes.map((n, i) => n.gpus - final.reduce((s, c) => s + c[i]!, 0));
  for (const [u, used] of floored) {
    if (!left.some((f) => f > 0)) break;
    if (used.reduce((s, x) => s + x, 0) < offered.get(u)!) continue;
    const kept = jobsOf.get(u)!.map((j) => [j.id, allocations[j.id], rejections[j.id]] as const);
    decideOn(
      instance(u),
      jobsOf.get(u)!,
      used.map((c, i) => c + left[i]!),
    );
    let again = countsOf(u);
    // Offered more, its policy may still decide less than its floor gave it (a quota's top-up).
    if (again.reduce((s, x) => s + x, 0) < used.reduce((s, x) => s + x, 0)) {
      for (const [id, a, r] of kept) {
        if (a) allocations[id] = a;
        else delete allocations[id];
        if (r) rejections[id] = r;
        else delete rejections[id];
      }
      again = used;
    }
    for (let i = 0; i < nodes.length; i++) left[i]! -= again[i]! - used[i]!;
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
  const untold = new Map([...why].map(([u, w]) => [u, w.taken]));
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
    const n = Math.min(before - after, untold.get(j.owner ?? '') ?? 0);
    if (w && n > 0) {
      untold.set(j.owner ?? '', untold.get(j.owner ?? '')! - n);
      const verb = after === 0 ? `stopped (${before} -> 0)` : `shrank ${before} -> ${after}`;
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
