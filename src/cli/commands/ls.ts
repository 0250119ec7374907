import { connect, connectionFlags } from '../../client/connect.js';
import { parseFlags, type CliCommand } from '../command.js';
import { renderJobList } from '../job-render.js';

export const lsCommand: CliCommand = {
  name: 'ls',
  summary: 'List jobs on the goodput server',
  help: `Usage: goodput ls [--json] [--data-dir DIR | --server URL] [--token T]

Lists your jobs (all jobs with the admin token), oldest first, with the batch size (total and
local x accumulation x replicas), goodput (initial-batch samples/s) and the speedup over one
replica now and at the best size the model predicts.
  --json   print a JSON array of jobs (id, name, user, state, replicas, restarts,
           submitted_at, finished_at, ...)`,
  async run(argv) {
    const { values } = parseFlags('ls', argv, { ...connectionFlags, json: { type: 'boolean' } }, false);
    const jobs = await connect(values).listJobs();
    if (values.json) {
      console.log(JSON.stringify(jobs, null, 2));
      return 0;
    }
    console.log(renderJobList(jobs));
    return 0;
  },
};
