/**
 * What `goodput sim --json` reports per user and per team of a workload with a `user` column
 * (issue 48): average JCT, GPU-hours, share of the GPU time, and for teams with a quota the
 * quota shortfall: minutes a team held fewer devices than min(demand, quota) of a type, counted
 * from the third round in a row (the layer promises a quota within 2 rounds).
 */
import { gpuTypeOf, type Allocation, type ClusterSnapshot } from '../core/cluster.js';
import { jobDemand, type SharesConfig } from '../policy/shares/index.js';
import type { JobOutcome } from './simulator.js';

/** One user's or team's outcome. */
export interface GroupReport {
  jobs: number;
  avg_jct_s: number;
  gpu_hours: number;
  /** Its GPU time / all jobs' GPU time, in [0, 1]. */
  gpu_share: number;
}

/** A team's outcome, with its quota shortfall. */
export interface TeamReport extends GroupReport {
  /** Minutes below min(demand, quota) beyond 2 rounds in a row, summed over GPU types. */
  quota_shortfall_min: number;
}

/** Per user and per team reports of a simulation. */
export interface SharesReport {
  users: Record<string, GroupReport>;
  teams: Record<string, TeamReport>;
}

/** Rounds a team may wait for its quota before the shortfall counts (the layer's promise). */
export const QUOTA_GRACE_ROUNDS = 2;

/** Follows the simulator's decisions (SimOptions.onDecision) and counts quota shortfall. */
export class QuotaShortfall {
  private readonly streak = new Map<string, number>();
  readonly minutes = new Map<string, number>();

  constructor(
    private readonly shares: SharesConfig | undefined,
    private readonly interval_s: number,
  ) {}

  /** One round: the snapshot the policy saw, the allocations it decided. */
  observe(snapshot: ClusterSnapshot, allocations: ReadonlyMap<string, Allocation>): void {
    const types = [...new Set(snapshot.nodes.map((n) => gpuTypeOf(n)))];
    for (const team of this.shares?.teams ?? []) {
      for (const type of types) {
        const quota = team.quota[type] ?? 0;
        if (quota === 0) continue;
        let demand = 0;
        let held = 0;
        for (const j of snapshot.jobs) {
          if (j.team !== team.name) continue;
          demand += jobDemand(j, snapshot.allocations[j.id]?.length ?? 0);
          held += (allocations.get(j.id) ?? []).filter((n) => gpuTypeOf(snapshot.nodes[n]!) === type).length;
        }
        const key = `${team.name}\u0000${type}`;
        const streak = held < Math.min(demand, quota) ? (this.streak.get(key) ?? 0) + 1 : 0;
        this.streak.set(key, streak);
        if (streak > QUOTA_GRACE_ROUNDS)
          this.minutes.set(team.name, (this.minutes.get(team.name) ?? 0) + this.interval_s / 60);
      }
    }
  }
}

function group(outcomes: readonly JobOutcome[], total_gpu_s: number): GroupReport {
  const gpu_s = outcomes.reduce((s, j) => s + j.attained_gpu_s, 0);
  return {
    jobs: outcomes.length,
    avg_jct_s: outcomes.reduce((s, j) => s + j.jct_s, 0) / outcomes.length,
    gpu_hours: gpu_s / 3600,
    gpu_share: total_gpu_s > 0 ? gpu_s / total_gpu_s : 0,
  };
}

/** The per user and per team reports of `jobs` (outcomes with user and team), with `shortfall`. */
export function sharesReport(jobs: readonly JobOutcome[], shortfall?: QuotaShortfall): SharesReport {
  const total = jobs.reduce((s, j) => s + j.attained_gpu_s, 0);
  const by = (key: (j: JobOutcome) => string | undefined) => {
    const groups = new Map<string, JobOutcome[]>();
    for (const j of jobs) {
      const k = key(j);
      if (k !== undefined) (groups.get(k) ?? groups.set(k, []).get(k)!).push(j);
    }
    return [...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  };
  const users: Record<string, GroupReport> = {};
  for (const [u, list] of by((j) => j.user)) users[u] = group(list, total);
  const teams: Record<string, TeamReport> = {};
  for (const [t, list] of by((j) => j.team))
    teams[t] = { ...group(list, total), quota_shortfall_min: shortfall?.minutes.get(t) ?? 0 };
  return { users, teams };
}
