/**
 * How many devices of each GPU type every user is entitled to this round (issue 48): each team's
 * weighted share of the type, but at least its quota (both bounded by what its jobs can use), then
 * what others leave unused by weighted max-min fair share between teams (weight times the
 * fair-share factor of its decayed usage), then inside each team between its users the same way.
 * Capacity nobody can use is entitled to nobody (the layer lends it). Whole devices; ties break by name. Pure.
 */
import type { ShareUsage, TeamShare } from '../../core/cluster.js';

/** One user's demand: devices its jobs can use now, and the team it is charged to. */
export interface UserDemand {
  user: string;
  team: string;
  /** Devices its jobs can use (on any type: jobs here are not tied to one). */
  demand: number;
}

/** Entitlements by user, then by type; and the facts used, for words and `goodput shares`. */
export interface Entitlements {
  by_user: Map<string, Map<string, number>>;
  /** Fair-share factor of each team in (0, 1]: 2^-(usage fraction / share). */
  team_factor: Map<string, number>;
  /** Each active team's share of the cluster: weight / sum of the active teams' weights. */
  team_share: Map<string, number>;
  /** Devices of each type guaranteed to each team this round: min(quota, demand). */
  guaranteed: Map<string, Map<string, number>>;
}

/**
 * Weighted max-min fair split of `capacity` whole devices among `claims` (demand, weight > 0),
 * by name: nobody gets more than its demand; the real-valued split is rounded down and the
 * remaining devices go to the largest remainders (ties by name).
 */
export function waterFill(
  capacity: number,
  claims: ReadonlyMap<string, { demand: number; weight: number }>,
): Map<string, number> {
  const out = new Map<string, number>();
  const real = new Map<string, number>();
  let left = capacity;
  let open = [...claims].filter(([, c]) => c.demand > 0 && c.weight > 0);
  for (const [name] of claims) real.set(name, 0);
  while (open.length > 0 && left > 1e-9) {
    const weights = open.reduce((s, [, c]) => s + c.weight, 0);
    const level = left / weights;
    const capped = open.filter(([name, c]) => c.demand - real.get(name)! <= level * c.weight + 1e-12);
    if (capped.length === 0) {
      for (const [name, c] of open) real.set(name, real.get(name)! + level * c.weight);
      break;
    }
    for (const [name, c] of capped) {
      left -= c.demand - real.get(name)!;
      real.set(name, c.demand);
    }
    open = open.filter(([name]) => !capped.some(([n]) => n === name));
  }
  let total = 0;
  for (const [name, x] of real) {
    const whole = Math.floor(x + 1e-9);
    out.set(name, whole);
    total += whole;
  }
  let spare = Math.min(capacity, Math.round([...real.values()].reduce((s, x) => s + x, 0))) - total;
  const order = [...real]
    .filter(([name, x]) => x - out.get(name)! > 1e-9)
    .sort((a, b) => b[1] - out.get(b[0])! - (a[1] - out.get(a[0])!) || (a[0] < b[0] ? -1 : 1));
  for (const [name] of order) {
    if (spare <= 0) break;
    out.set(name, out.get(name)! + 1);
    spare--;
  }
  return out;
}

/**
 * Slurm's fair-share factor 2^-(u / s) of each team: u its fraction of all active teams' decayed
 * usage, s its share; `strength` scales the exponent (0: usage ignored). 1 for everyone before
 * any usage.
 */
export function fairShareFactors(
  shares: ReadonlyMap<string, number>,
  usage: Readonly<Record<string, number>> | undefined,
  strength: number,
): Map<string, number> {
  const total = [...shares.keys()].reduce((s, t) => s + (usage?.[t] ?? 0), 0);
  const out = new Map<string, number>();
  for (const [t, s] of shares) out.set(t, total > 0 ? 2 ** (-(strength * (usage?.[t] ?? 0)) / total / s) : 1);
  return out;
}

/**
 * `capacity` split between `names`: first each gets its plain weighted share of the whole
 * `capacity` (rounded down, so nobody ever gets less than its own part of the cluster: the sharing
 * incentive), but at least its `guaranteed` devices (its quota, already bounded by its demand) and
 * at most its demand; where quotas above their weighted shares leave too little for the others'
 * shares, those are cut by weight. What is left over (others' unused parts) goes by max-min of
 * weight times the fair-share factor of past usage, so past usage decides who borrows, never who
 * keeps its part. A quota is thus a floor under a team's weighted share, not an addition to it.
 */
function flooredShare(
  capacity: number,
  names: readonly string[],
  demand: ReadonlyMap<string, number>,
  weight: ReadonlyMap<string, number>,
  factor: ReadonlyMap<string, number>,
  guaranteed: ReadonlyMap<string, number> = new Map(),
): Map<string, number> {
  const sum = names.reduce((s, n) => s + weight.get(n)!, 0);
  const g = (n: string) => Math.min(guaranteed.get(n) ?? 0, demand.get(n)!);
  const plain = (n: string) => Math.floor((capacity * weight.get(n)!) / Math.max(sum, 1e-12));
  let floor = new Map(names.map((n) => [n, Math.min(demand.get(n)!, Math.max(g(n), plain(n)))]));
  if ([...floor.values()].reduce((s, x) => s + x, 0) > capacity) {
    const left = capacity - names.reduce((s, n) => s + g(n), 0);
    const above = waterFill(
      Math.max(0, left),
      new Map(names.map((n) => [n, { demand: floor.get(n)! - g(n), weight: weight.get(n)! }])),
    );
    floor = new Map(names.map((n) => [n, g(n) + (above.get(n) ?? 0)]));
  }
  const rest = capacity - [...floor.values()].reduce((s, x) => s + x, 0);
  const claims = new Map(
    names.map((n) => [n, { demand: demand.get(n)! - floor.get(n)!, weight: weight.get(n)! * factor.get(n)! }]),
  );
  const more = waterFill(rest, claims);
  return new Map(names.map((n) => [n, floor.get(n)! + (more.get(n) ?? 0)]));
}

/**
 * Entitlements of `users` on a cluster of `capacity` devices per type. `teams`: the shares
 * file's teams (others are a user's own team of weight 1 without a quota); `usage`: decayed
 * usage; `strength`: weight of past usage (fairShareFactors).
 */
export function entitle(
  capacity: ReadonlyMap<string, number>,
  users: readonly UserDemand[],
  teams: readonly TeamShare[],
  usage: ShareUsage | undefined,
  strength: number,
): Entitlements {
  const teamOf = (name: string) => teams.find((t) => t.name === name);
  const teamNames = [...new Set(users.map((u) => u.team))].sort();
  const weight = new Map(teamNames.map((t) => [t, teamOf(t)?.weight ?? 1]));
  const sumWeight = [...weight.values()].reduce((s, w) => s + w, 0);
  const team_share = new Map(teamNames.map((t) => [t, weight.get(t)! / sumWeight]));
  const team_factor = fairShareFactors(team_share, usage?.teams, strength);
  const teamLeft = new Map(teamNames.map((t) => [t, 0]));
  for (const u of users) teamLeft.set(u.team, teamLeft.get(u.team)! + u.demand);
  const types = [...capacity.keys()].sort();
  const teamGets = new Map(teamNames.map((t) => [t, new Map<string, number>()]));
  const guaranteed = new Map(teamNames.map((t) => [t, new Map<string, number>()]));
  // Quotas first, on every type, before any share: demand that a quota will take is kept for it
  // (a quota larger than the type's capacity is split in proportion to the quotas).
  const quotaLeft = new Map(teamLeft);
  for (const type of types) {
    const quotaClaims = new Map(
      teamNames.map((t) => {
        const q = teamOf(t)?.quota[type] ?? 0;
        return [t, { demand: Math.min(q, quotaLeft.get(t)!), weight: Math.max(q, 1e-9) }];
      }),
    );
    for (const [t, n] of waterFill(capacity.get(type)!, quotaClaims)) {
      guaranteed.get(t)!.set(type, n);
      quotaLeft.set(t, quotaLeft.get(t)! - n);
    }
  }
  types.forEach((type, k) => {
    const later = (t: string) => types.slice(k + 1).reduce((s, x) => s + guaranteed.get(t)!.get(x)!, 0);
    const demandHere = new Map(teamNames.map((t) => [t, Math.max(0, teamLeft.get(t)! - later(t))]));
    const quotaHere = new Map(teamNames.map((t) => [t, guaranteed.get(t)!.get(type)!]));
    const byShare = flooredShare(capacity.get(type)!, teamNames, demandHere, weight, team_factor, quotaHere);
    for (const t of teamNames) {
      const n = byShare.get(t) ?? 0;
      teamGets.get(t)!.set(type, n);
      teamLeft.set(t, teamLeft.get(t)! - n);
    }
  });
  // Inside each team: its users by the same rule (equal weights times their own usage factor).
  const by_user = new Map<string, Map<string, number>>();
  const userLeft = new Map(users.map((u) => [u.user, u.demand]));
  for (const t of teamNames) {
    const members = users.filter((u) => u.team === t);
    const shares = new Map(members.map((u) => [u.user, 1 / members.length]));
    const factor = fairShareFactors(shares, usage?.users, strength);
    for (const u of members) by_user.set(u.user, new Map());
    const ones = new Map(members.map((u) => [u.user, 1]));
    const names = members.map((u) => u.user);
    for (const type of types) {
      for (const [user, n] of flooredShare(teamGets.get(t)!.get(type)!, names, userLeft, ones, factor)) {
        by_user.get(user)!.set(type, n);
        userLeft.set(user, userLeft.get(user)! - n);
      }
    }
  }
  return { by_user, team_factor, team_share, guaranteed };
}
