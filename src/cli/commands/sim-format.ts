import type { WorkloadReport } from '../../sim/run-workload.js';

/** Renders rows as an aligned text table; the first column left-aligned, the others right. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Seconds as an integer or one decimal. */
export function secs(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

/** What the metric columns mean, printed under the tables of `sim` and `compare`. */
export const metricLegend = [
  'JCT: job completion time, from submission to finish (avg, median p50, p99; lower is better). makespan: until the last job finished.',
  'GPU-h: GPU time charged to jobs. restarts: re-allocations after the first start. GPU util: GPU-h / (GPUs x makespan).',
  "FTF: finish-time fairness, a job's JCT divided by its JCT alone on a fair share of the cluster (1 = as fast as its share;",
  'worst FTF: the largest ratio). FTF>1: share of jobs that finished later than on their fair share (lower is fairer).',
].join('\n');

/** The metric columns shared by `sim` and `compare`. */
export const metricHeader = [
  'avg JCT s',
  'p50 JCT s',
  'p99 JCT s',
  'makespan s',
  'GPU-h',
  'restarts',
  'GPU util',
  'worst FTF',
  'FTF>1',
];

/** Metric cells of one report (or of an average of reports). */
export function metricCells(
  r: Pick<
    WorkloadReport,
    | 'avg_jct_s'
    | 'p50_jct_s'
    | 'p99_jct_s'
    | 'makespan_s'
    | 'gpu_hours'
    | 'restarts'
    | 'gpu_utilization'
    | 'ftf_worst'
    | 'ftf_unfair_share'
  >,
): string[] {
  return [
    secs(r.avg_jct_s),
    secs(r.p50_jct_s),
    secs(r.p99_jct_s),
    secs(r.makespan_s),
    r.gpu_hours.toFixed(1),
    secs(r.restarts),
    `${(100 * r.gpu_utilization).toFixed(1)}%`,
    r.ftf_worst.toFixed(2),
    `${(100 * r.ftf_unfair_share).toFixed(0)}%`,
  ];
}

/** Numeric mean of the summary metrics of several reports. */
export function meanMetrics(reports: readonly WorkloadReport[]) {
  const mean = (f: (r: WorkloadReport) => number) => reports.reduce((s, r) => s + f(r), 0) / reports.length;
  return {
    avg_jct_s: mean((r) => r.avg_jct_s),
    p50_jct_s: mean((r) => r.p50_jct_s),
    p99_jct_s: mean((r) => r.p99_jct_s),
    makespan_s: mean((r) => r.makespan_s),
    gpu_hours: mean((r) => r.gpu_hours),
    restarts: mean((r) => r.restarts),
    gpu_utilization: mean((r) => r.gpu_utilization),
    ftf_worst: mean((r) => r.ftf_worst),
    ftf_unfair_share: mean((r) => r.ftf_unfair_share),
  };
}
