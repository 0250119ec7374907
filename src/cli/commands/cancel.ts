import { connect, connectionFlags } from '../../client/connect.js';
import { usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';

export const cancelCommand: CliCommand = {
  name: 'cancel',
  summary: 'Cancel a job (SIGTERM to its replicas, SIGKILL after the grace period)',
  help: `Usage: goodput cancel <job> [--json] [--data-dir DIR | --server URL] [--token T]

<job> is a job id or name (the latest job of that name).`,
  async run(argv) {
    const { values, positionals } = parseFlags('cancel', argv, { ...connectionFlags, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw usageError("cancel: expected one job id or name. See 'goodput cancel --help'.");
    const job = await connect(values).cancel(positionals[0]!);
    console.log(values.json ? JSON.stringify(job, null, 2) : `cancelled job ${job.id} (${job.name})`);
    return 0;
  },
};
