import { connect, connectionFlags } from '../../client/connect.js';
import { usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';
import { renderProfile, renderProfileList } from '../profile-render.js';

export const profilesCommand: CliCommand = {
  name: 'profiles',
  summary: 'List profile keys and what their jobs measured (the model a new job of the key starts from)',
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
       measured it; otherwise an admin's.`,
  async run(argv) {
    const { values, positionals } = parseFlags('profiles', argv, { ...connectionFlags, json: { type: 'boolean' }, 'gpu-type': { type: 'string' } });
    const [action = 'ls', ...rest] = positionals;
    if (values['gpu-type'] !== undefined && action !== 'rm') throw usageError("profiles: --gpu-type goes with 'rm'. See 'goodput profiles --help'.");
    const client = connect(values);
    if (action === 'ls' && rest.length === 0) {
      const profiles = await client.profiles();
      console.log(values.json ? JSON.stringify(profiles, null, 2) : renderProfileList(profiles));
      return 0;
    }
    if (action === 'show' && rest.length === 1) {
      const profile = await client.profile(rest[0]!);
      console.log(values.json ? JSON.stringify(profile, null, 2) : renderProfile(profile));
      return 0;
    }
    if (action === 'rm' && rest.length === 1) {
      const removed = await client.deleteProfile(rest[0]!, values['gpu-type']);
      console.log(values.json ? JSON.stringify(removed, null, 2) : removed.map((p) => `removed the profile of '${p.key}' on ${p.gpu_type} (${p.jobs} job(s), replicas ${p.measured_replicas.join(', ')})`).join('\n'));
      return 0;
    }
    throw usageError("profiles: expected 'ls', 'show <key>' or 'rm <key>'. See 'goodput profiles --help'.");
  },
};
