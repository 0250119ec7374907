/**
 * The dashboard's plan page data: `GET /dash/plan/:key` plans a profile key from the profiles
 * the control plane learned (the store the policy reads) with the same planner as `goodput plan`
 * (planner/plan-report.ts), for the profiles the caller may read (as GET /v1/profiles).
 * Query: `gpus` (default 1,2,4,8,16,32), `target_samples` (default 1e6), `deadline_s`, `budget`,
 * `gpu_type` (comma-separated). With the server's data directory, the memory profiles and notes
 * `goodput profile` keeps beside the store (planner-profiles.json) are read too, so memory is
 * checked as in `goodput plan`.
 */
import type { Hono } from 'hono';
import { requireUser, type ApiEnv } from '../api/auth.js';
import { badRequest } from '../api/http-error.js';
import { profileVisibility } from '../api/profile-routes.js';
import { GoodputError } from '../core/errors.js';
import { PROFILE_KEY, PROFILE_KEY_RULE } from '../core/profile-key.js';
import { splitScopedKey } from '../core/profile-scope.js';
import type { PlanRequest } from '../planner/plan.js';
import { planReport, type PlanReport } from '../planner/plan-report.js';
import type { DeviceProfile } from '../planner/plan-types.js';
import type { Store } from '../store/store.js';
import type { StoredKeyProfile } from '../store/types.js';
import { DEFAULT_GPU_TABLE, readGpuTable } from '../datadir/gpu-table.js';
import { readSideBook, type SideBook } from '../datadir/profile-file.js';

function deviceProfile(p: StoredKeyProfile, side: SideBook): DeviceProfile {
  const extra = side[p.key]?.[p.gpu_type];
  const device: DeviceProfile = {
    gpu_type: p.gpu_type,
    points: p.points,
    grad: p.grad,
    limits: p.limits,
    notes: extra?.notes ?? [],
  };
  if (p.model_parameters !== undefined) device.model_parameters = p.model_parameters;
  if (extra?.memory) device.memory = extra.memory;
  return device;
}

function numberQuery(name: string, value: string | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined || value === '') return fallback;
  const x = Number(value);
  if (!Number.isFinite(x) || x <= 0) throw badRequest(`${name} must be a positive number`);
  return x;
}

/**
 * Registers `GET /dash/plan/:key` on `app` (behind the dashboard's authentication); `data_dir`:
 * the server's data directory, where `goodput profile` keeps memory profiles.
 */
export function registerPlanRoute(app: Hono<ApiEnv>, store: Store, data_dir?: string): void {
  app.get('/dash/plan/:key', async (c) => {
    const p = requireUser(c.get('principal'));
    const key = c.req.param('key');
    if (!PROFILE_KEY.test(key)) throw badRequest(`'${key.slice(0, 140)}' is not a profile key (${PROFILE_KEY_RULE})`);
    const gpus = (c.req.query('gpus') ?? '1,2,4,8,16,32').split(',').map(Number);
    if (gpus.length === 0 || gpus.length > 32 || !gpus.every((g) => Number.isInteger(g) && g >= 1 && g <= 4096))
      throw badRequest('gpus must be up to 32 comma-separated integers in [1, 4096]');
    const request: PlanRequest = {
      gpus: [...new Set(gpus)].sort((a, b) => a - b),
      target_samples: numberQuery('target_samples', c.req.query('target_samples'), 1e6) as number,
    };
    const deadline_s = numberQuery('deadline_s', c.req.query('deadline_s'), undefined);
    const budget = numberQuery('budget', c.req.query('budget'), undefined);
    if (deadline_s !== undefined) request.deadline_s = deadline_s;
    if (budget !== undefined) request.budget = budget;
    const types = c.req
      .query('gpu_type')
      ?.split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    const may = await profileVisibility(store, p.user, p.admin);
    const byKey = new Map<string, DeviceProfile[]>();
    const side = data_dir === undefined ? {} : readSideBook(data_dir);
    for (const sp of (await store.listKeyProfiles()).filter(may)) {
      // The caller's own scoped profile and the shared one of a key plan together, as the policy reads them.
      const plain = splitScopedKey(sp.key).key;
      byKey.set(plain, [...(byKey.get(plain) ?? []), deviceProfile(sp, side)]);
    }
    const profiles = byKey.get(key) ?? [];
    if (profiles.length === 0)
      throw new GoodputError(
        'E_NOT_FOUND',
        `no profile '${key}'${p.admin ? '' : " among your jobs' keys"}; a key gets a profile once a job of it has reported, or from goodput profile`,
      );
    const others = [...byKey.entries()].filter(([k]) => k !== key).map(([, v]) => v);
    let report: PlanReport;
    try {
      report = planReport({
        key,
        profiles,
        others,
        table: readGpuTable(DEFAULT_GPU_TABLE()),
        table_source: 'data/gpus.json',
        request,
        types,
        notes:
          data_dir === undefined
            ? [
                'memory not checked: the dashboard was started without the data directory that holds the memory profiles',
              ]
            : [],
      });
    } catch (error) {
      if (error instanceof GoodputError) throw error;
      throw new GoodputError('E_INPUT', `plan: ${(error as Error).message}`);
    }
    // JSON has no Infinity: a time or cost that never comes is null.
    return c.json(
      JSON.parse(
        JSON.stringify(report, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)),
      ) as PlanReport,
    );
  });
}
