/**
 * `goodput sim` and `goodput compare` on a cluster of several GPU types (--cluster
 * TYPE:NODESxGPUS,... with --traces DIR in the Sia format): the typed policies of
 * sim/hetero/run-hetero.ts, one workload after another, progress on stderr.
 */
import { usageError } from '../../core/errors.js';
import type { SharesConfig } from '../../policy/shares/index.js';
import { HETERO_POLICIES, runHeteroWorkload, type HeteroReport } from '../../sim/hetero/run-hetero.js';
import { numberFlag } from '../command.js';
import { renderTable, secs } from './sim-format.js';
import { workloadFiles } from './sim-inputs.js';

/** Flags of a mixed-cluster run. */
export const heteroFlags = {
  cluster: { type: 'string' },
  traces: { type: 'string' },
} as const;

/** Help lines shared by `sim` and `compare`. */
export const heteroHelp = `  --cluster <spec>        a cluster of several GPU types, TYPE:NODESxGPUS[,...], e.g.
                          aws:6x4,rtx:3x8,dgx-ext:2x8 (then --traces is required and the
                          policies are ${HETERO_POLICIES.join(', ')}; --nodes/--gpus-per-node do not apply)
  --traces <dir>          per-type traces in the Sia format (<app>/placements-<type>.csv,
                          scalability-<type>.csv, validation-<batch>.csv)`;

interface HeteroValues {
  /** `goodput sim --shares`, read: teams, weights and quotas per GPU type. */
  shares?: SharesConfig | undefined;
  cluster?: string | undefined;
  traces?: string | undefined;
  workload?: string | undefined;
  seed?: string | undefined;
  json?: boolean | undefined;
}

const header = ['avg JCT s', 'p99 JCT s', 'makespan s', 'GPU-h', 'restarts', 'worst FTF', 'decision p99 ms'];

function cells(
  r: Pick<
    HeteroReport,
    'avg_jct_s' | 'p99_jct_s' | 'makespan_s' | 'gpu_hours' | 'restarts' | 'ftf_worst' | 'decision_p99_ms'
  >,
): string[] {
  return [
    secs(r.avg_jct_s),
    secs(r.p99_jct_s),
    secs(r.makespan_s),
    r.gpu_hours.toFixed(1),
    secs(r.restarts),
    r.ftf_worst.toFixed(2),
    r.decision_p99_ms.toFixed(1),
  ];
}

function mean(reports: readonly HeteroReport[]) {
  const m = (f: (r: HeteroReport) => number) => reports.reduce((s, r) => s + f(r), 0) / reports.length;
  return {
    avg_jct_s: m((r) => r.avg_jct_s),
    p99_jct_s: m((r) => r.p99_jct_s),
    makespan_s: m((r) => r.makespan_s),
    gpu_hours: m((r) => r.gpu_hours),
    restarts: m((r) => r.restarts),
    ftf_worst: m((r) => r.ftf_worst),
    decision_p99_ms: m((r) => r.decision_p99_ms),
  };
}

/** Runs `policies` over the workloads of `values` on the mixed cluster; prints; returns the exit code. */
export async function runHeteroCommand(
  command: 'sim' | 'compare',
  values: HeteroValues,
  policies: readonly string[],
): Promise<number> {
  if (!values.traces)
    throw usageError(
      `${command}: --cluster needs --traces <dir> (per-type traces in the Sia format). See 'goodput ${command} --help'.`,
    );
  for (const p of policies) {
    if (!(HETERO_POLICIES as readonly string[]).includes(p))
      throw usageError(
        `${command}: policy '${p}' does not run on a mixed cluster; valid: ${HETERO_POLICIES.join(', ')}.`,
      );
  }
  const files = workloadFiles(command, values.workload);
  const seed = numberFlag(command, 'seed', values.seed, 0, { integer: true, min: 0 });
  const byPolicy: { policy: string; reports: HeteroReport[] }[] = [];
  for (const policy of policies) {
    const reports: HeteroReport[] = [];
    for (const file of files) {
      process.stderr.write(`${command} ${policy}: ${file} (${reports.length + 1}/${files.length})\n`);
      reports.push(
        await runHeteroWorkload(file, {
          policy,
          cluster: values.cluster!,
          traces_dir: values.traces,
          seed,
          ...(values.shares ? { shares: values.shares } : {}),
        }),
      );
    }
    byPolicy.push({ policy, reports });
  }
  const strip = ({ workload: _w, policy: _p, ...rest }: HeteroReport) => rest;
  if (command === 'sim') {
    const { policy, reports } = byPolicy[0]!;
    if (values.json === true) {
      console.log(
        JSON.stringify({
          policy,
          cluster: values.cluster,
          workloads: Object.fromEntries(reports.map((r) => [r.workload, strip(r)])),
          mean_avg_jct_s: mean(reports).avg_jct_s,
        }),
      );
    } else {
      console.log(
        `policy ${policy} on ${values.cluster}\n${renderTable(
          ['workload', 'jobs', ...header],
          reports.map((r) => [r.workload, String(r.num_jobs), ...cells(r)]),
        )}`,
      );
    }
    return 0;
  }
  if (values.json === true) {
    const out: Record<string, unknown> = {};
    for (const { policy, reports } of byPolicy)
      out[policy] = { ...mean(reports), workloads: Object.fromEntries(reports.map((r) => [r.workload, strip(r)])) };
    console.log(
      JSON.stringify({
        cluster: values.cluster,
        workloads: byPolicy[0]!.reports.map((r) => r.workload),
        policies: out,
      }),
    );
  } else {
    const scope = files.length === 1 ? byPolicy[0]!.reports[0]!.workload : `mean over ${files.length} workloads`;
    console.log(
      `${scope} on ${values.cluster}\n${renderTable(
        ['policy', ...header],
        byPolicy.map(({ policy, reports }) => [policy, ...cells(mean(reports))]),
      )}`,
    );
  }
  return 0;
}
