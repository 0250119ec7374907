import type { JobFilter, JobSummary } from '../../client/client.js';
import { connect, connectionFlags } from '../../client/connect.js';
import { usageError } from '../../core/errors.js';
import { terminalJson } from '../../util/printable.js';
import { parseFlags, type CliCommand } from '../command.js';
import { renderJobList } from '../job-render.js';

/** Jobs `ls` shows unless --limit or --all says otherwise. */
const DEFAULT_LS_JOBS = 50;

export const lsCommand: CliCommand = {
  name: 'ls',
  help: `Usage: goodput ls [--state S] [--user U] [--name N] [--since T] [--limit N | --all] [--json]
                  [--data-dir DIR | --server URL] [--token T]

Lists your newest jobs (anyone's with the admin token), oldest of them first, with the batch
size (total and local x accumulation x replicas), goodput (initial-batch samples/s) and the
speedup over one replica now and at the best size the model predicts.
  --state S    only jobs in these states, comma-separated: queued, starting, running,
               rescaling, preempted, succeeded, failed, cancelled, or the groups active, finished
  --user U     only U's jobs (admin; a user lists only their own)
  --name N     only jobs named N
  --since T    only jobs submitted since T: an ISO-8601 time or an age (30m, 24h, 7d)
  --limit N    the newest N jobs that match (default ${DEFAULT_LS_JOBS}); a line says when there are more
  --all        every job that matches (fetched page by page)
  --json       print a JSON array of jobs (id, name, user, state, replicas, devices, gpu_type,
               restarts, submitted_at, finished_at, ...)`,
  async run(argv) {
    const { values } = parseFlags(
      'ls',
      argv,
      {
        ...connectionFlags,
        json: { type: 'boolean' },
        state: { type: 'string' },
        user: { type: 'string' },
        name: { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string' },
        all: { type: 'boolean' },
      },
      false,
    );
    const limit = values.limit === undefined ? DEFAULT_LS_JOBS : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw usageError(`ls: --limit must be a positive integer, got '${values.limit}'. See 'goodput ls --help'.`);
    if (values.all && values.limit !== undefined)
      throw usageError("ls: --all and --limit exclude each other. See 'goodput ls --help'.");
    const filter: JobFilter = {};
    for (const k of ['state', 'user', 'name', 'since'] as const) if (values[k] !== undefined) filter[k] = values[k];
    const client = connect(values);
    let jobs: JobSummary[];
    let more = false;
    if (values.all) jobs = await client.listJobs(filter);
    else {
      // Newest first, page by page up to the limit, then shown oldest first.
      jobs = [];
      let cursor: string | null | undefined;
      while (jobs.length < limit) {
        const page = await client.listJobsPage({
          ...filter,
          limit: Math.min(1000, limit - jobs.length),
          ...(cursor ? { cursor } : {}),
        });
        jobs.push(...page.jobs);
        cursor = page.next_cursor;
        if (cursor === null) break;
      }
      more = cursor !== null && cursor !== undefined;
      jobs.reverse();
    }
    if (values.json) {
      console.log(terminalJson(jobs));
      return 0;
    }
    console.log(renderJobList(jobs));
    if (more) console.log(`(the newest ${jobs.length} shown; more match: --limit N or --all)`);
    return 0;
  },
};
