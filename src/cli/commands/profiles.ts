import { connect, connectionFlags } from '../../client/connect.js';
import { usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';
import { renderProfile, renderProfileList } from '../profile-render.js';

export const profilesCommand: CliCommand = {
  name: 'profiles',
  summary: 'List profile keys and what their jobs measured (the model a new job of the key starts from)',
  help: `Usage: goodput profiles [ls] [--json]
       goodput profiles show <key> [--json]
  (each also takes --data-dir DIR | --server URL, --token T)

A job's profile key is its spec's 'profile', by default the name of its script or module
(python3 train.py --seed 1 -> 'train'; see docs/control-plane.md). Per key and GPU type the
server keeps what the key's jobs reported: step times per configuration, the throughput model
fitted on them and the gradient-noise trajectory. A new job of a known key starts from them
(at its efficient size instead of 1 replica); one whose own measurements disagree discards them.

ls     keys of your jobs (admin: all) with GPU type, jobs, measured replica counts and the fitted
       samples/s at each.
show   one key in full: measured points, fitted parameters, batch limits, gradient trajectory.`,
  async run(argv) {
    const { values, positionals } = parseFlags('profiles', argv, { ...connectionFlags, json: { type: 'boolean' } });
    const [action = 'ls', ...rest] = positionals;
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
    throw usageError("profiles: expected 'ls' or 'show <key>'. See 'goodput profiles --help'.");
  },
};
