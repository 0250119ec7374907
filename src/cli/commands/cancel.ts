import { connect, connectionFlags } from '../../client/connect.js';
import { GoodputError, usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';

export const cancelCommand: CliCommand = {
  name: 'cancel',
  help: `Usage: goodput cancel <job> [<job>...] [--json] [--data-dir DIR | --server URL] [--token T]
       goodput cancel [--user U] [--state S] [--name N] [--json] ...

<job> is a job id or name (the latest job of that name). With several, each is cancelled in turn;
one that cannot be (unknown, not yours) is reported and the others are still cancelled (exit 1).

With --user, --state or --name instead of jobs: every job matching all the filters given is
cancelled in one transaction on the server, e.g. a flood of queued jobs:
  goodput cancel --user alice --state queued
  --user U    jobs of user U (default: yours; another user's need an admin token)
  --state S   states or groups, comma-separated: queued, preempted, starting, running, rescaling,
              active (default: active)
  --name N    jobs named N
  --json      print {"cancelled": count, "jobs": [{id, name, user, from}]}`,
  async run(argv) {
    const { values, positionals } = parseFlags('cancel', argv, {
      ...connectionFlags,
      json: { type: 'boolean' },
      user: { type: 'string' },
      state: { type: 'string' },
      name: { type: 'string' },
    });
    const filter = {
      ...(values.user !== undefined ? { user: values.user } : {}),
      ...(values.state !== undefined ? { state: values.state } : {}),
      ...(values.name !== undefined ? { name: values.name } : {}),
    };
    if (Object.keys(filter).length > 0) {
      if (positionals.length > 0)
        throw usageError(
          "cancel: give jobs or filters (--user, --state, --name), not both. See 'goodput cancel --help'.",
        );
      const done = await connect(values).cancelMatching(filter);
      console.log(
        values.json
          ? JSON.stringify(done, null, 2)
          : `cancelled ${done.cancelled} job(s)` +
              `${done.cancelled > 0 ? ` (${[...new Set(done.jobs.map((j) => j.from))].join(', ')} before)` : ': none matched'}`,
      );
      return 0;
    }
    if (positionals.length === 0)
      throw usageError(
        "cancel: expected a job id or name, or filters (--user, --state, --name). See 'goodput cancel --help'.",
      );
    const client = connect(values);
    if (positionals.length === 1) {
      const job = await client.cancel(positionals[0]!);
      console.log(values.json ? JSON.stringify(job, null, 2) : `cancelled job ${job.id} (${job.name})`);
      return 0;
    }
    const cancelled = [];
    let failed = false;
    for (const ref of positionals) {
      try {
        const job = await client.cancel(ref);
        cancelled.push(job);
        if (!values.json) console.log(`cancelled job ${job.id} (${job.name})`);
      } catch (error) {
        // A server that cannot be reached fails them all alike: say it once.
        if (error instanceof GoodputError && error.code === 'E_SERVER_DOWN') throw error;
        failed = true;
        console.error(
          `goodput: ${ref}: ${error instanceof GoodputError ? `error[${error.code}]: ` : ''}${(error as Error).message}`,
        );
      }
    }
    if (values.json) console.log(JSON.stringify(cancelled, null, 2));
    return failed ? 1 : 0;
  },
};
