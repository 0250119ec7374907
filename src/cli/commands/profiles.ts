import { resolve } from 'node:path';
import {
  profileSummaryView,
  profileView,
  type ProfileSummaryView,
  type ProfileView,
} from '../../api/profile-routes.js';
import { connect, connectionFlags, defaultDataDir } from '../../client/connect.js';
import { GoodputError, usageError } from '../../core/errors.js';
import { splitScopedKey } from '../../core/profile-scope.js';
import { withDataDirStore } from '../../datadir/profile-file.js';
import type { Store } from '../../store/store.js';
import type { StoredKeyProfile } from '../../store/types.js';
import { parseFlags, type CliCommand } from '../command.js';
import { renderProfile, renderProfileList } from '../profile-render.js';

export const profilesCommand: CliCommand = {
  name: 'profiles',
  help: `Usage: goodput profiles [ls] [--json]
       goodput profiles show <key> [--json]
       goodput profiles rm <key> [--gpu-type TYPE] [--json]
  (each also takes --data-dir DIR | --server URL, --token T)

A job's profile key is its spec's 'profile', by default the name of its script or module
(python3 train.py --seed 1 -> 'train'; see docs/control-plane.md). Per key and GPU type the
server keeps what the key's jobs reported: step times per configuration, the throughput model
fitted on them, the gradient-noise trajectory and the model's parameter count. A new job of a known key starts from them
(at its efficient size instead of 1 replica); one whose own measurements disagree discards them.

ls     keys of your jobs (admin: all) with GPU type, jobs, measured replica counts, the model's
       parameter count (when a job reported it) and the fitted samples/s at each.
show   one key in full: the model's parameter count, measured points, fitted parameters, batch
       limits, gradient trajectory.
rm     forget a key's profile (all GPU types, or --gpu-type), e.g. after the model's code or data
       changed under the same key: new jobs of the key start from nothing again, and running ones
       start a new profile at their next reports. Yours alone to remove when only your jobs
       measured it; otherwise an admin's.

With no server running (and no --server or GOODPUT_SERVER), each reads and changes the data
directory's store directly, as its owner: what 'goodput profile' stored there, for example.`,
  async run(argv) {
    const { values, positionals } = parseFlags('profiles', argv, {
      ...connectionFlags,
      json: { type: 'boolean' },
      'gpu-type': { type: 'string' },
    });
    const [action = 'ls', ...rest] = positionals;
    if (values['gpu-type'] !== undefined && action !== 'rm')
      throw usageError("profiles: --gpu-type goes with 'rm'. See 'goodput profiles --help'.");
    const client = connect(values);
    const local = offlineStore(values);
    const print = (value: ProfileSummaryView[] | ProfileView[], text: string): number => {
      console.log(values.json ? JSON.stringify(value, null, 2) : text);
      return 0;
    };
    if (action === 'ls' && rest.length === 0) {
      const profiles = await local(
        () => client.profiles(),
        async (store) => (await store.listKeyProfiles()).map(profileSummaryView),
      );
      return print(profiles, renderProfileList(profiles));
    }
    if (action === 'show' && rest.length === 1) {
      const key = rest[0]!;
      const profile = await local(
        () => client.profile(key),
        async (store) => (await ofKey(store, key, undefined)).map(profileView),
      );
      return print(profile, renderProfile(profile));
    }
    if (action === 'rm' && rest.length === 1) {
      const key = rest[0]!;
      const gpu_type = values['gpu-type'];
      const removed = await local(
        () => client.deleteProfile(key, gpu_type),
        async (store) => {
          const found = await ofKey(store, key, gpu_type);
          for (const p of found) await store.deleteKeyProfile(p.key, p.gpu_type);
          return found.map(profileSummaryView);
        },
      );
      return print(
        removed,
        removed
          .map(
            (p) =>
              `removed the profile of '${p.key}' on ${p.gpu_type} (${p.jobs} job(s), replicas ${p.measured_replicas.join(', ')})`,
          )
          .join('\n'),
      );
    }
    throw usageError("profiles: expected 'ls', 'show <key>' or 'rm <key>'. See 'goodput profiles --help'.");
  },
};

/**
 * The request to the server, or, when no server answers and none was named (--server,
 * GOODPUT_SERVER), the same read or change made on the data directory's store directly (its
 * owner sees every scope, as an admin does). The server's error stands when the directory has no
 * store.
 */
function offlineStore(values: { server?: string | undefined; 'data-dir'?: string | undefined }) {
  const data_dir = resolve(values['data-dir'] ?? defaultDataDir());
  const named = values.server !== undefined || process.env.GOODPUT_SERVER !== undefined;
  return async <T>(online: () => Promise<T>, offline: (store: Store) => Promise<T>): Promise<T> => {
    try {
      return await online();
    } catch (error) {
      if (named || !(error instanceof GoodputError) || error.code !== 'E_SERVER_DOWN') throw error;
      const result = await withDataDirStore(data_dir, offline);
      if (result === undefined) throw error;
      console.error(`goodput: no server is running: using the store in ${data_dir} directly`);
      return result;
    }
  };
}

/** A key's stored profiles in every scope, on one GPU type or all; E_NOT_FOUND when none. */
async function ofKey(store: Store, key: string, gpu_type: string | undefined): Promise<StoredKeyProfile[]> {
  const found = (await store.listKeyProfiles()).filter(
    (p) => splitScopedKey(p.key).key === key && (gpu_type === undefined || p.gpu_type === gpu_type),
  );
  if (found.length === 0)
    throw new GoodputError(
      'E_NOT_FOUND',
      `no profile '${key}'${gpu_type === undefined ? '' : ` on ${gpu_type}`} in this data directory; 'goodput profiles ls' lists them`,
    );
  return found;
}
