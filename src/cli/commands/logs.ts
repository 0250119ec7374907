import { connect, connectionFlags } from '../../client/connect.js';
import { usageError } from '../../core/errors.js';
import { isTerminal, type JobState } from '../../store/lifecycle.js';
import { terminalText } from '../../util/printable.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';

export const logsCommand: CliCommand = {
  name: 'logs',
  help: `Usage: goodput logs <job> [-f] [--replica N] [--data-dir DIR | --server URL] [--token T]

Prints the log of replica N (default 0) over all attempts. -f follows it until the job ends,
then exits 1 when the job failed (0 otherwise), so scripts can wait on a job with it.
The log is printed raw, byte for byte as the job wrote it (as kubectl logs does): escape
sequences in it reach your terminal; pipe it through 'less' or 'cat -v' for a job you do not
trust. ('goodput show' prints a failed job's last lines with control characters escaped.)
A log past the server's --log-limit-mb keeps its newest part: -f then goes on from the new end.`,
  async run(argv) {
    const { values, positionals } = parseFlags('logs', argv, {
      ...connectionFlags,
      follow: { type: 'boolean', short: 'f' },
      replica: { type: 'string' },
    });
    if (positionals.length !== 1) throw usageError("logs: expected one job id or name. See 'goodput logs --help'.");
    const replica = numberFlag('logs', 'replica', values.replica, 0, { integer: true, min: 0 });
    const client = connect(values);
    let offset = 0;
    for (;;) {
      const chunk = await client.logs(positionals[0]!, replica, offset);
      if (chunk.text) process.stdout.write(chunk.text);
      // An empty answer would look like a silent script; say when there is no log yet and why.
      if (offset === 0 && !chunk.text && !isTerminal(chunk.state as JobState)) {
        console.error(
          `goodput: job ${positionals[0]} is ${chunk.state}: replica ${replica} has written no log ` +
            `yet` +
            `${values.follow ? '; waiting for it' : ' (its log appears once it runs; -f waits for it)'}`,
        );
      }
      offset = chunk.next_offset;
      if (!values.follow) return 0;
      if (!chunk.text && isTerminal(chunk.state as JobState)) {
        if (chunk.state !== 'failed') return 0;
        const job = await client.getJob(positionals[0]!);
        console.error(`goodput: job ${job.id} failed: ${terminalText(job.reason)}`);
        return 1;
      }
      if (!chunk.text) await new Promise((r) => setTimeout(r, 500));
    }
  },
};
