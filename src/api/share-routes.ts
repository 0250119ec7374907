/**
 * Seeing the shares (issue 48 item 5): GET /v1/shares (each team's quota, use, borrowed and lent
 * devices per type, fair-share factor, decayed usage) and GET /v1/usage?since_ms= (device-hours
 * per user, team and GPU type from the attempts' replicas; a user sees their own rows, an admin
 * everyone's). Also the per-team Prometheus series of /metrics.
 */
import type { Hono } from 'hono';
import { deviceType } from '../backends/device-type.js';
import type { Controller } from '../control/controller.js';
import { sharesView, teamOf, type TeamView, type TypedHolding } from '../policy/shares/index.js';
import { PLACED_STATES } from '../store/lifecycle.js';
import type { Store } from '../store/store.js';
import { requireUser, type ApiEnv } from './auth.js';
import { badRequest } from './http-error.js';
import type { UsageRow } from './usage-row.js';

export type { UsageRow };

/** Devices each user's jobs hold now, by type. */
async function holdings(store: Store, controller: Controller): Promise<TypedHolding[]> {
  const inventory = controller.inventory();
  const out: TypedHolding[] = [];
  for (const j of await store.listJobs({ states: PLACED_STATES }))
    j.allocation.forEach((node, i) => {
      const device = inventory[node]?.devices.find((d) => d.index === j.devices[i]);
      out.push({ user: j.user, type: deviceType(device), devices: 1 });
    });
  return out;
}

/** The teams as `goodput shares` shows them. */
export async function teamViews(store: Store, controller: Controller): Promise<TeamView[]> {
  const { config, usage } = controller.shares();
  return sharesView(config, usage, await holdings(store, controller));
}

/** Registers the share routes on `app` (behind authentication). */
export function registerShareRoutes(
  app: Hono<ApiEnv>,
  store: Store,
  controller: Controller,
  now_ms: () => number = Date.now,
): void {
  app.get('/v1/shares', async (c) => {
    requireUser(c.get('principal'));
    return c.json(await teamViews(store, controller));
  });
  app.get('/v1/usage', async (c) => {
    const principal = requireUser(c.get('principal'));
    const since = Number(c.req.query('since_ms') ?? 0);
    if (!Number.isFinite(since) || since < 0) throw badRequest('since_ms must be a time in ms since the epoch');
    const { config } = controller.shares();
    const rows: UsageRow[] = (await store.deviceTimeSince(since, now_ms()))
      .filter((r) => principal.admin || r.user === principal.user)
      .map((r) => ({
        user: r.user,
        team: teamOf(config, r.user),
        gpu_type: r.gpu_type || 'unknown',
        device_hours: r.device_s / 3600,
      }));
    return c.json(rows);
  });
}

const label = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Per-team series of /metrics: devices held and quota per type, fair-share factor, decayed usage. */
export async function teamSeries(store: Store, controller: Controller): Promise<string[]> {
  const teams = await teamViews(store, controller);
  const per = (t: TeamView, m: Record<string, number>, name: string) =>
    Object.entries(m).map(([type, n]) => `${name}{team="${label(t.team)}",type="${label(type)}"} ${n}`);
  return [
    '# HELP goodput_team_devices_used Devices held by the jobs of each team, per GPU type.',
    '# TYPE goodput_team_devices_used gauge',
    ...teams.flatMap((t) => per(t, t.use, 'goodput_team_devices_used')),
    '# HELP goodput_team_quota_devices Devices guaranteed to each team per GPU type (shares file).',
    '# TYPE goodput_team_quota_devices gauge',
    ...teams.flatMap((t) => per(t, t.quota, 'goodput_team_quota_devices')),
    '# HELP goodput_team_fair_share_factor Fair-share factor of each team, 2^-(usage fraction / share).',
    '# TYPE goodput_team_fair_share_factor gauge',
    ...teams.map((t) => `goodput_team_fair_share_factor{team="${label(t.team)}"} ${t.fair_share_factor}`),
    '# HELP goodput_team_decayed_usage_device_seconds Decayed usage of each team (half-life of the shares).',
    '# TYPE goodput_team_decayed_usage_device_seconds gauge',
    ...teams.map(
      (t) => `goodput_team_decayed_usage_device_seconds{team="${label(t.team)}"} ${t.decayed_usage_device_h * 3600}`,
    ),
  ];
}
