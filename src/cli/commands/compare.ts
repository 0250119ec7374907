import type { CliCommand } from '../command.js';
import { parseFlags } from '../command.js';
import { usageError } from '../../core/errors.js';
import { findPolicy, policyNames } from '../../policy/registry.js';
import { runParallel, type SimTask } from '../../sim/parallel.js';
import { requirePolicy, workloadName, type WorkloadReport } from '../../sim/run-workload.js';
import { clusterFlags, clusterSettings, workloadFiles } from './sim-inputs.js';
import { heteroFlags, heteroHelp, runHeteroCommand } from './sim-hetero.js';
import { meanMetrics, metricCells, metricHeader, metricLegend, renderTable } from './sim-format.js';
import { ProgressBar } from './sim-progress.js';

/** Policies compared when --policies is not given (those of them that are registered). */
export const DEFAULT_COMPARE_POLICIES: readonly string[] = ['fifo', 'tiresias', 'optimus', 'pollux', 'goodput'];

function defaultPolicies(): string[] {
  return DEFAULT_COMPARE_POLICIES.filter((p) => findPolicy(p) !== undefined);
}

const help = `Usage: goodput compare --workload <csv file | directory> [options]

Runs several scheduling policies on the same workload(s) and prints one comparison table
(metrics averaged over the workloads when a directory is given). Runs in parallel worker threads;
progress goes to stderr (a bar on a terminal, a plain line every 5 s when piped).

Columns: JCT = job completion time (submission to finish); makespan = until the last job
finished; GPU-h = GPU time charged to jobs; FTF = finish-time fairness, a job's JCT / its JCT
alone on a fair share of the cluster (worst FTF: the largest); FTF>1 = share of jobs that
finished later than on their fair share.

Options:
  --workload <path>       workload CSV file or directory of them
  --policies <a,b,...>    policies to compare (default: ${DEFAULT_COMPARE_POLICIES.join(',')}, those registered)
  --interval, --interference, --nodes, --gpus-per-node, --seed, --submit-jitter
                          as for 'goodput sim'
  --json                  print one JSON object on stdout instead of the table
${heteroHelp}
                          (default policies there: goodput,sia,pollux)

Registered policies: ${policyNames().join(', ')}.
Example: goodput compare --workload data/pollux/workloads/workload-1.csv`;

export const compareCommand: CliCommand = {
  name: 'compare',
  help,
  async run(argv) {
    const { values, positionals } = parseFlags('compare', argv, {
      workload: { type: 'string' },
      policies: { type: 'string' },
      json: { type: 'boolean' },
      ...clusterFlags,
      ...heteroFlags,
    });
    if (positionals.length > 0)
      throw usageError(`compare: unexpected argument '${positionals[0]}'. See 'goodput compare --help'.`);
    const policies = values.policies
      ? values.policies
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p !== '')
      : defaultPolicies();
    if (policies.length === 0) throw usageError('compare: --policies needs at least one policy name.');
    if (values.cluster !== undefined)
      return runHeteroCommand('compare', values, values.policies ? policies : ['goodput', 'sia', 'pollux']);
    policies.forEach((p) => requirePolicy(p));
    const files = workloadFiles('compare', values.workload);
    const tasks: SimTask[] = policies.flatMap((policy) =>
      files.map((file) => ({ file, settings: clusterSettings('compare', values, policy) })),
    );
    const bar = new ProgressBar('compare', tasks.length);
    let reports: WorkloadReport[];
    try {
      reports = await runParallel(tasks, (p) => bar.update(p));
    } finally {
      bar.finish();
    }
    const byPolicy = policies.map((policy, i) => ({
      policy,
      reports: reports.slice(i * files.length, (i + 1) * files.length),
    }));
    if (values.json === true) {
      const out: Record<string, unknown> = {};
      for (const { policy, reports: rs } of byPolicy) {
        out[policy] = {
          ...meanMetrics(rs),
          workloads: Object.fromEntries(rs.map(({ workload, policy: _p, ...rest }) => [workload, rest])),
        };
      }
      console.log(JSON.stringify({ workloads: files.map(workloadName), policies: out }));
      return 0;
    }
    const rows = byPolicy.map(({ policy, reports: rs }) => [policy, ...metricCells(meanMetrics(rs))]);
    const scope = files.length === 1 ? reports[0]!.workload : `mean over ${files.length} workloads`;
    console.log(`${scope}\n${renderTable(['policy', ...metricHeader], rows)}\n\n${metricLegend}`);
    return 0;
  },
};
