import { GoodputError } from '../../core/errors.js';
import type { RefitCommit } from '../store.js';
import type { ProfileUse, StoredKeyProfile } from '../types.js';
import type { SqliteKeyProfiles } from './key-profiles.js';
import type { StoreCore } from './store-core.js';

/** The job-side profile writes of the SQLite store: a refit's commit and the job's profile use. */

/**
 * Store.saveRefit: the job's perf/correction, its profile discard, and the key-profile merge
 * (replacing a stale one) in one transaction; events for a discard or a replacement.
 */
export function saveRefit(
  core: StoreCore,
  keyProfiles: SqliteKeyProfiles,
  refit: RefitCommit,
): StoredKeyProfile | undefined {
  const now = core.now_ms();
  let evented = false;
  const profile = core.db
    .transaction(() => {
      const row = core.jobRow(refit.job_id);
      if (!row) throw new GoodputError('E_NOT_FOUND', `no job ${refit.job_id}`);
      const state = row.state as string;
      core.db
        .prepare('UPDATE jobs SET perf = ?, correction = ? WHERE id = ?')
        .run(JSON.stringify(refit.perf), refit.correction ? JSON.stringify(refit.correction) : null, refit.job_id);
      if (refit.discard && row.profile_use !== 'discarded') {
        core.db.prepare('UPDATE jobs SET profile_use = ? WHERE id = ?').run('discarded', refit.job_id);
        core.event(
          refit.job_id,
          now,
          'scheduler',
          'profile-discarded',
          state,
          state,
          refit.discard.reason,
          JSON.stringify(refit.discard.data),
        );
        evented = true;
      }
      if (!refit.profile) return undefined;
      const { update, perf, replaced } = refit.profile;
      if (replaced) {
        keyProfiles.removeIn(update.key, update.gpu_type);
        core.event(
          refit.job_id,
          now,
          'scheduler',
          'profile-replaced',
          state,
          state,
          replaced.reason,
          JSON.stringify(replaced.data),
        );
        evented = true;
      }
      keyProfiles.mergeIn(update);
      keyProfiles.savePerf(update.key, update.gpu_type, perf);
      return keyProfiles.get(update.key, update.gpu_type);
    })
    .immediate();
  if (evented) core.advanceHighWater();
  return profile;
}

/**
 * Store.setProfileUse: 'discarded' is final; returns false (and writes nothing) when the use is
 * unchanged or already discarded.
 */
export function setProfileUse(
  core: StoreCore,
  job_id: string,
  use: ProfileUse,
  actor: string,
  reason: string,
  data: Record<string, unknown>,
): boolean {
  const now = core.now_ms();
  return (
    core.db
      .transaction(() => {
        const row = core.jobRow(job_id);
        if (!row) throw new GoodputError('E_NOT_FOUND', `no job ${job_id}`);
        if (row.profile_use === use || row.profile_use === 'discarded') return false;
        core.db.prepare('UPDATE jobs SET profile_use = ? WHERE id = ?').run(use, job_id);
        core.event(
          job_id,
          now,
          actor,
          use === 'used' ? 'profile-used' : 'profile-discarded',
          row.state as string,
          row.state as string,
          reason,
          JSON.stringify(data),
        );
        return true;
      })
      .immediate() && core.advanceHighWater()
  );
}
