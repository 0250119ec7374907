/**
 * Decayed usage of teams and users (the memory of fair share): device-seconds, halved every
 * half-life, as Slurm's PriorityDecayHalfLife. The drivers keep it (the simulator in memory on
 * simulated time, the control plane in its store) and put it in the snapshot; the policy only
 * reads it. Pure.
 */
import type { ShareUsage } from '../../core/cluster.js';

/** Devices held through the last interval by one owner, charged to its team. */
export interface Holding {
  user: string;
  team: string;
  devices: number;
}

/** Entries below this many device-seconds are dropped (a long-gone user's memory ends). */
const FORGOTTEN = 1e-3;

function advance(
  prev: Readonly<Record<string, number>>,
  add: ReadonlyMap<string, number>,
  decay: number,
  dt: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(prev)) out[k] = v * decay;
  for (const [k, d] of add) out[k] = (out[k] ?? 0) + d * dt;
  for (const k of Object.keys(out)) if (out[k]! < FORGOTTEN) delete out[k];
  return out;
}

/**
 * `prev` decayed to `now_s` plus `holdings` charged for the time since `prev.at_s` (their devices
 * held throughout). Without `prev`: nothing charged, the memory starts at `now_s`.
 */
export function advanceUsage(
  prev: ShareUsage | undefined,
  holdings: readonly Holding[],
  now_s: number,
  half_life_s: number,
): ShareUsage {
  if (!prev) return { at_s: now_s, teams: {}, users: {} };
  const dt = Math.max(0, now_s - prev.at_s);
  const decay = 2 ** (-dt / half_life_s);
  const users = new Map<string, number>();
  const teams = new Map<string, number>();
  for (const h of holdings) {
    users.set(h.user, (users.get(h.user) ?? 0) + h.devices);
    teams.set(h.team, (teams.get(h.team) ?? 0) + h.devices);
  }
  return {
    at_s: now_s,
    teams: advance(prev.teams, teams, decay, dt),
    users: advance(prev.users, users, decay, dt),
  };
}
