import { resolve } from 'node:path';
import { usageError } from '../../core/errors.js';
import { startDashboard } from '../../dashboard/server.js';
import { loadSimRuns } from '../../dashboard/sim-runs.js';
import { numberFlag, parseFlags, PORT, type CliCommand } from '../command.js';

export const viewCommand: CliCommand = {
  name: 'view',
  help: `Usage: goodput view RUN.jsonl [MORE.jsonl ...] [options]

Serves the dashboard's simulation viewer on recorded runs, side by side: allocation timeline
(one row per GPU), distribution of job completion times (CDF) and GPU utilization over time.
Record runs with 'goodput sim --policy P --workload W --out DIR' (one DIR per policy); runs
are labelled by file name, or DIR/name when names repeat.

  --port N    HTTP port (default 7880; 0 = any free port)
  --host H    listen address (default 127.0.0.1)

Example:
  goodput sim --policy goodput --workload data/pollux/workloads/workload-1.csv --out runs/goodput
  goodput sim --policy tiresias --workload data/pollux/workloads/workload-1.csv --out runs/tiresias
  goodput view runs/goodput/workload-1.jsonl runs/tiresias/workload-1.jsonl`,
  async run(argv) {
    const { values, positionals } = parseFlags('view', argv, { port: { type: 'string' }, host: { type: 'string' } });
    if (positionals.length === 0)
      throw usageError(
        "view: pass at least one run file written by 'goodput sim --out DIR'. See 'goodput view --help'.",
      );
    const port = numberFlag('view', 'port', values.port, 7880, PORT);
    const runs = loadSimRuns(positionals.map((p) => resolve(p)));
    const dashboard = await startDashboard({ host: values.host ?? '127.0.0.1', port, sim: { runs } });
    console.log(`goodput view: ${runs.length} run(s) on ${dashboard.url}/#/sim (Ctrl-C to stop)`);
    await new Promise<void>((done) => {
      const stop = () => void dashboard.close().then(done, done);
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return 0;
  },
};
