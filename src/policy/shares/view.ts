/**
 * What `goodput shares`, the dashboard and /metrics show of the shares (issue 48 item 5): per
 * team, its weight and share, quota, devices in use, borrowed (used beyond its quota) and lent
 * (quota it leaves idle for others) per GPU type, its fair-share factor and decayed usage. Pure.
 */
import type { ShareUsage } from '../../core/cluster.js';
import { fairShareFactors } from './entitle.js';
import { teamShare, type SharesConfig } from './config.js';

/** Devices one user holds now, of one type. */
export interface TypedHolding {
  user: string;
  type: string;
  devices: number;
}

/** One team as `goodput shares` shows it. */
export interface TeamView {
  team: string;
  members: string[];
  weight: number;
  /** weight / the sum of the weights of the teams shown. */
  share: number;
  quota: Record<string, number>;
  use: Record<string, number>;
  borrowed: Record<string, number>;
  lent: Record<string, number>;
  /** 2^-(usage fraction / share), in (0, 1]: 1 for a team that used no more than its share. */
  fair_share_factor: number;
  /** Decayed usage in device-hours (half-life of the shares). */
  decayed_usage_device_h: number;
}

/**
 * The teams of `config`, plus every user holding devices or with usage outside them (their own
 * team), in name order.
 */
export function sharesView(
  config: SharesConfig,
  usage: ShareUsage | undefined,
  holdings: readonly TypedHolding[],
): TeamView[] {
  const teamOfUser = (u: string) => config.teams.find((t) => t.members.includes(u))?.name ?? u;
  const names = new Set(config.teams.map((t) => t.name));
  for (const h of holdings) names.add(teamOfUser(h.user));
  for (const t of Object.keys(usage?.teams ?? {})) names.add(t);
  const teams = [...names].sort().map((n) => teamShare(config, n));
  const sum = teams.reduce((s, t) => s + t.weight, 0);
  const shares = new Map(teams.map((t) => [t.name, t.weight / sum]));
  const factors = fairShareFactors(shares, usage?.teams, 1);
  return teams.map((t) => {
    const use: Record<string, number> = {};
    for (const h of holdings) if (teamOfUser(h.user) === t.name) use[h.type] = (use[h.type] ?? 0) + h.devices;
    const borrowed: Record<string, number> = {};
    const lent: Record<string, number> = {};
    for (const type of new Set([...Object.keys(use), ...Object.keys(t.quota)])) {
      const q = t.quota[type] ?? 0;
      const u = use[type] ?? 0;
      if (u > q) borrowed[type] = u - q;
      if (q > u) lent[type] = q - u;
    }
    return {
      team: t.name,
      members: [...t.members],
      weight: t.weight,
      share: shares.get(t.name)!,
      quota: { ...t.quota },
      use,
      borrowed,
      lent,
      fair_share_factor: factors.get(t.name)!,
      decayed_usage_device_h: (usage?.teams[t.name] ?? 0) / 3600,
    };
  });
}
