/**
 * Profiles of profile keys under /v1/profiles: what the jobs of each key measured
 * per GPU type, the throughput model fitted on it and the gradient-noise trajectory, and their
 * removal. A user sees their own profiles (scope: the user, core/profile-scope.ts) and the shared
 * profiles of keys their own jobs use (a shared profile holds other users' step times), and
 * removes those that hold only their own jobs' measurements; an admin sees and removes all; a
 * job token none.
 */
import type { Hono } from 'hono';
import { profileKeyOf, PROFILE_KEY, PROFILE_KEY_RULE } from '../core/profile-key.js';
import { GoodputError } from '../core/errors.js';
import { scopedKey, splitScopedKey } from '../core/profile-scope.js';
import { throughput } from '../goodput/throughput.js';
import type { Store } from '../store/store.js';
import type { StoredKeyProfile } from '../store/types.js';
import { requireUser, type ApiEnv } from './auth.js';
import { badRequest, forbidden } from './http-error.js';

import type { ProfileSummaryView, ProfileView } from './views.js';

export type { ProfileSummaryView, ProfileView };

/** The list view of a stored profile. Pure. */
export function profileSummaryView(p: StoredKeyProfile): ProfileSummaryView {
  const sizes = [...new Set(p.points.map((q) => q.num_replicas))].sort((a, b) => a - b);
  const perf = p.perf;
  const best = (r: number) =>
    Math.max(
      ...p.points
        .filter((q) => q.num_replicas === r)
        .map((q) => (perf ? throughput(perf, q.num_nodes, r, q.local_bsz, 0) : 0)),
    );
  const { key, scope } = splitScopedKey(p.key);
  return {
    key,
    gpu_type: p.gpu_type,
    scope: scope === '' ? null : scope,
    jobs: p.jobs,
    measured_replicas: sizes,
    model_parameters: p.model_parameters ?? null,
    throughput: perf ? sizes.map((r) => ({ replicas: r, samples_per_s: Math.round(best(r) * 1000) / 1000 })) : [],
    updated_at: new Date(p.updated_at_ms).toISOString(),
  };
}

/** The full view of a stored profile (never the ids of its jobs: they may be other users'). Pure. */
export function profileView(p: StoredKeyProfile): ProfileView {
  return { ...profileSummaryView(p), points: [...p.points], perf: p.perf, grad: [...p.grad], limits: p.limits };
}

/**
 * Whether the caller may read a stored profile: an admin all, a user their own and the shared
 * ones of their own jobs' keys.
 */
export async function profileVisibility(
  store: Store,
  user: string,
  admin: boolean,
): Promise<(p: StoredKeyProfile) => boolean> {
  if (admin) return () => true;
  const keys = new Set((await store.listJobs({ user })).map((j) => profileKeyOf(j.spec)));
  return (p) => {
    const { key, scope } = splitScopedKey(p.key);
    return scope === user || (scope === '' && keys.has(key));
  };
}

/** Registers the profile routes on `app` (behind authentication). */
export function registerProfileRoutes(app: Hono<ApiEnv>, store: Store): void {
  const visible = (user: string, admin: boolean): Promise<(p: StoredKeyProfile) => boolean> =>
    profileVisibility(store, user, admin);

  app.get('/v1/profiles', async (c) => {
    const principal = requireUser(c.get('principal'));
    const may = await visible(principal.user, principal.admin);
    return c.json((await store.listKeyProfiles()).filter(may).map(profileSummaryView));
  });

  /** The stored profiles of `key` in every scope (admin) or in the shared one and the user's. */
  const ofKey = async (key: string, user: string, admin: boolean): Promise<StoredKeyProfile[]> =>
    admin
      ? (await store.listKeyProfiles()).filter((p) => splitScopedKey(p.key).key === key)
      : [...(await store.listKeyProfiles(key)), ...(await store.listKeyProfiles(scopedKey(key, user)))];

  /** The profiles of the key in the path the caller may read (E_NOT_FOUND when none). */
  const readable = async (key: string, user: string, admin: boolean): Promise<StoredKeyProfile[]> => {
    if (!PROFILE_KEY.test(key)) throw badRequest(`'${key.slice(0, 140)}' is not a profile key (${PROFILE_KEY_RULE})`);
    const may = await visible(user, admin);
    const found = (await ofKey(key, user, admin)).filter(may);
    // Another user's key reads like an unknown one: its existence is theirs to share.
    if (found.length === 0)
      throw new GoodputError(
        'E_NOT_FOUND',
        `no profile '${key}'${admin ? '' : " among your jobs' keys"}; 'goodput profiles ls' lists ` +
          `them (a key gets a profile once a job of it has reported)`,
      );
    return found;
  };

  app.get('/v1/profiles/:key', async (c) => {
    const principal = requireUser(c.get('principal'));
    return c.json((await readable(c.req.param('key'), principal.user, principal.admin)).map(profileView));
  });

  // A stale profile (new code or data under an old key) would otherwise be escaped only by a new
  // key. Removing one that holds other users' measurements is theirs too: admin only then.
  app.delete('/v1/profiles/:key', async (c) => {
    const principal = requireUser(c.get('principal'));
    const key = c.req.param('key');
    const gpu_type = c.req.query('gpu_type');
    const found = (await readable(key, principal.user, principal.admin)).filter(
      (p) => gpu_type === undefined || p.gpu_type === gpu_type,
    );
    if (found.length === 0)
      throw new GoodputError(
        'E_NOT_FOUND',
        `profile '${key}' has no GPU type '${gpu_type}'; 'goodput profiles show ${key}' lists its GPU types`,
      );
    if (!principal.admin) {
      // The profile's own jobs, one by one: the cost follows the profile, not the user's history.
      const owners = new Map<string, string | undefined>();
      for (const id of new Set(found.flatMap((p) => p.job_ids))) owners.set(id, (await store.getJob(id))?.user);
      const shared = found.find((p) => p.job_ids.some((id) => owners.get(id) !== principal.user));
      if (shared)
        throw forbidden(
          `the profile of '${key}' on ${shared.gpu_type} holds measurements of other users' jobs; ask an admin to remove it`,
        );
    }
    const removed: ProfileSummaryView[] = [];
    for (const p of found) if (await store.deleteKeyProfile(p.key, p.gpu_type)) removed.push(profileSummaryView(p));
    return c.json(removed);
  });
}
