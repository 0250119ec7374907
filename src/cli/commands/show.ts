import { connect, connectionFlags } from '../../client/connect.js';
import { usageError } from '../../core/errors.js';
import { terminalJson } from '../../util/printable.js';
import { parseFlags, type CliCommand } from '../command.js';
import { renderJob } from '../job-render.js';

export const showCommand: CliCommand = {
  name: 'show',
  help: `Usage: goodput show <job> [--json] [--data-dir DIR | --server URL] [--token T]

<job> is a job id or name. Shows the batch size (local x accumulation x replicas) and
learning-rate scale, throughput x statistical efficiency = goodput, the speedup now and the
best one the model predicts, its profile key and whether its model came from the key's
profile (or when and why its own measurements discarded it; 'goodput profiles'), and why each
size and batch-size change happened, and the verdicts across ranks (a straggling rank, a hung
rank; docs/doctor.md).
--json prints the job with its replicas, model parameters and full event history.`,
  async run(argv) {
    const { values, positionals } = parseFlags('show', argv, { ...connectionFlags, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw usageError("show: expected one job id or name. See 'goodput show --help'.");
    const client = connect(values);
    const job = await client.getJob(positionals[0]!);
    const events = await client.events(job.id);
    // A server without the ranks route (older) shows the job without the verdicts across ranks.
    const ranks = await client.ranks(job.id).catch(() => undefined);
    if (values.json) {
      console.log(terminalJson({ ...job, events, ...(ranks ? { ranks } : {}) }));
      return 0;
    }
    console.log(renderJob(job, events, await client.reports(job.id, 200), ranks));
    return 0;
  },
};
