import { connect, connectionFlags } from '../../client/connect.js';
import { age, formatTable } from '../../client/table.js';
import type { JobView } from '../../client/client.js';
import { parseFlags, type CliCommand } from '../command.js';

/** What a user should notice about a job: why it failed, or that it was found hung. */
function note(j: JobView): string {
  const text = j.state === 'failed' ? j.reason : (j.health ?? '');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export const lsCommand: CliCommand = {
  name: 'ls',
  summary: 'List jobs on the goodput server',
  help: `Usage: goodput ls [--json] [--data-dir DIR | --server URL] [--token T]

Lists your jobs (all jobs with the admin token), oldest first.
  --json   print a JSON array of jobs (id, name, user, state, replicas, restarts,
           submitted_at, finished_at, ...)`,
  async run(argv) {
    const { values } = parseFlags('ls', argv, { ...connectionFlags, json: { type: 'boolean' } }, false);
    const jobs = await connect(values).listJobs();
    if (values.json) {
      console.log(JSON.stringify(jobs, null, 2));
      return 0;
    }
    const rows = jobs.map((j) => [j.id, j.name, j.user, j.state, String(j.replicas), String(j.restarts), String(j.step), age(j.submitted_at), note(j)]);
    console.log(formatTable(['id', 'name', 'user', 'state', 'replicas', 'restarts', 'step', 'submitted', 'note'], rows));
    return 0;
  },
};
