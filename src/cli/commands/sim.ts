import type { CliCommand } from '../command.js';
import { parseFlags } from '../command.js';
import { resolve } from 'node:path';
import { GoodputError, usageError } from '../../core/errors.js';
import { directoryProblem } from '../../util/directory.js';
import { parsePolicyParams } from '../../policy/policy-params.js';
import { policyNames } from '../../policy/registry.js';
import { runParallel } from '../../sim/parallel.js';
import { requirePolicy, runWorkload, type WorkloadReport } from '../../sim/run-workload.js';
import { clusterFlags, clusterSettings, workloadFiles } from './sim-inputs.js';
import { heteroFlags, heteroHelp, runHeteroCommand } from './sim-hetero.js';
import { meanMetrics, metricCells, metricHeader, metricLegend, renderTable, secs } from './sim-format.js';
import { ProgressBar } from './sim-progress.js';
import { readSharesFile } from '../../multiuser/shares-file.js';
import { quotaTypeProblem } from '../../policy/shares/index.js';
import { parseClusterSpec } from '../../sim/hetero/hetero-sim.js';

const help = `Usage: goodput sim --policy <name> --workload <csv file | directory> [options]

Replays a workload trace (columns name,time,application,num_replicas,batch_size) on a simulated
cluster, with job speeds from the measured Pollux application traces, and reports job
completion times. A directory runs every *.csv in it, in parallel worker threads.

Options:
  --policy <name>         scheduling policy (${policyNames().join(', ')})
  --workload <path>       workload CSV file or directory of them
  --interval <s>          scheduling interval in seconds (default 60)
  --interference <x>      slowdown in [0,1) of multi-node jobs sharing a node (default 0)
  --nodes <n>             nodes in the cluster (default 16)
  --gpus-per-node <g>     GPUs per node, 1..4 (default 4)
  --seed <n>              seed of randomized policies and of --submit-jitter (default 0)
  --submit-jitter <s>     move every job's submission by a random offset within +-s/2
                          seconds, drawn from --seed (default 0: as written); runs over
                          several seeds show how much of a difference is chance
  --policy-param <k=v>    set a tunable knob of the policy (repeatable), e.g. rank_exponent=3;
                          goodput's knobs are listed in docs/policy.md
  --json                  print one JSON object on stdout instead of the table
  --out <dir>             write one JSON line per interval to <dir>/<workload>.jsonl
  --shares <file>         teams, weights and quotas (docs/control-plane.md "Shares") for a
                          workload with a 'user' (and 'team') column; --json then reports per
                          user and team: average JCT, GPU-hours, GPU share, quota shortfall.
                          The simulator's GPUs are of type 'default' (quota: {default: 8});
                          with --cluster, quotas name the cluster's types (quota: {rtx: 8})
${heteroHelp}

Columns: JCT = job completion time (p50/p99 over jobs); makespan = last completion; GPU-h = GPU
time held by jobs (30 s restart delays included); GPU util = GPU-h / (GPUs x makespan);
worst FTF = worst finish-time-fairness ratio, JCT / JCT alone on a fair share of the cluster
(ceil(GPUs / average active jobs) GPUs); FTF>1 = share of jobs finishing later than that.

Example: goodput sim --policy tiresias --workload data/pollux/workloads/workload-1.csv
         goodput sim --policy sia --cluster aws:6x4,rtx:3x8,dgx-ext:2x8 --traces DIR/traces --workload DIR/workloads/philly --json
         (DIR: the Sia artifact's data: traces/ and workloads/)`;

/** Table or JSON of `sim` results. */
export function formatSimReports(policy: string, reports: readonly WorkloadReport[], json: boolean): string {
  const mean_avg_jct_s = reports.reduce((s, r) => s + r.avg_jct_s, 0) / reports.length;
  if (json) {
    const workloads: Record<string, Omit<WorkloadReport, 'workload' | 'policy'>> = {};
    for (const r of reports) {
      const { workload: _w, policy: _p, ...rest } = r;
      workloads[r.workload] = rest;
    }
    return JSON.stringify({ policy, workloads, mean_avg_jct_s });
  }
  const rows = reports.map((r) => [r.workload, String(r.num_jobs), ...metricCells(r)]);
  if (reports.length > 1)
    rows.push([
      'mean',
      secs(reports.reduce((s, r) => s + r.num_jobs, 0) / reports.length),
      ...metricCells(meanMetrics(reports)),
    ]);
  const wall = reports.reduce((s, r) => s + r.wall_ms, 0) / 1000;
  return (
    `policy ${policy}\n${renderTable(['workload', 'jobs', ...metricHeader], rows)}` +
    `\n(simulation time ${wall.toFixed(1)} s in total)\n\n${metricLegend}`
  );
}

export const simCommand: CliCommand = {
  name: 'sim',
  help,
  async run(argv) {
    const { values, positionals } = parseFlags('sim', argv, {
      policy: { type: 'string' },
      workload: { type: 'string' },
      json: { type: 'boolean' },
      out: { type: 'string' },
      shares: { type: 'string' },
      'policy-param': { type: 'string', multiple: true },
      ...clusterFlags,
      ...heteroFlags,
    });
    if (positionals.length > 0)
      throw usageError(`sim: unexpected argument '${positionals[0]}'. See 'goodput sim --help'.`);
    if (!values.policy) throw usageError(`sim: --policy is required; valid policies: ${policyNames().join(', ')}.`);
    if (values.out !== undefined) {
      // Checked before the simulation, which can take minutes, rather than failing at its first record.
      const problem = directoryProblem(resolve(values.out), 0o777);
      if (problem !== undefined)
        throw new GoodputError('E_OUTPUT', `sim: cannot write to --out ${values.out}: ${problem}; pass another --out`);
    }
    const shares = values.shares !== undefined ? readSharesFile(values.shares) : undefined;
    const types = values.cluster !== undefined ? parseClusterSpec(values.cluster).map((p) => p.type) : ['default'];
    const problem = shares && quotaTypeProblem(shares, types);
    if (problem) throw new GoodputError('E_SHARES', `sim: ${values.shares}: ${problem}`, 2);
    if (values.cluster !== undefined) return runHeteroCommand('sim', { ...values, shares }, [values.policy]);
    const policy_params = parsePolicyParams(requirePolicy(values.policy), values['policy-param'] ?? []);
    const settings = {
      ...clusterSettings('sim', values, values.policy),
      out_dir: values.out,
      policy_params,
      ...(shares !== undefined ? { shares } : {}),
    };
    const files = workloadFiles('sim', values.workload);
    const bar = new ProgressBar(`sim ${values.policy}`, files.length);
    let reports: WorkloadReport[];
    try {
      if (files.length === 1) {
        let last = 0;
        reports = [
          await runWorkload(files[0]!, settings, (p) => {
            const now = Date.now();
            if (now - last < 100) return;
            last = now;
            bar.update({ index: 0, ...p, done: false });
          }),
        ];
      } else {
        reports = await runParallel(
          files.map((file) => ({ file, settings })),
          (p) => bar.update(p),
        );
      }
    } finally {
      bar.finish();
    }
    console.log(formatSimReports(values.policy, reports, values.json === true));
    return 0;
  },
};
