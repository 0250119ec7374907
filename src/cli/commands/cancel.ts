import { connect, connectionFlags } from '../../client/connect.js';
import { GoodputError, usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';

export const cancelCommand: CliCommand = {
  name: 'cancel',
  summary: 'Cancel a job (SIGTERM to its replicas, SIGKILL after the grace period)',
  help: `Usage: goodput cancel <job> [<job>...] [--json] [--data-dir DIR | --server URL] [--token T]

<job> is a job id or name (the latest job of that name). With several, each is cancelled in turn;
one that cannot be (unknown, not yours) is reported and the others are still cancelled (exit 1).`,
  async run(argv) {
    const { values, positionals } = parseFlags('cancel', argv, { ...connectionFlags, json: { type: 'boolean' } });
    if (positionals.length === 0) throw usageError("cancel: expected a job id or name. See 'goodput cancel --help'.");
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
        console.error(`goodput: ${ref}: ${error instanceof GoodputError ? `error[${error.code}]: ` : ''}${(error as Error).message}`);
      }
    }
    if (values.json) console.log(JSON.stringify(cancelled, null, 2));
    return failed ? 1 : 0;
  },
};
