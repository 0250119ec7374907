import type { KernelTypeRow } from '../analyze/hta/breakdown.js';
import type { TraceRankAnalysis } from '../analyze/trace-rank.js';
import type { Bottleneck, Finding } from '../findings/finding.js';
import type { HorovodTimeline } from '../parse/horovod-timeline.js';
import type { GpuSample } from '../parse/nvidia-smi/gpu-sample.js';
import type { Topology } from '../parse/nvidia-smi/topo.js';
import type { RankStepSummary } from '../parse/step-breakdown.js';

/** The kinds of input the doctor recognises by content. */
export type InputKind =
  | 'pytorch-trace'
  | 'nvidia-smi-csv'
  | 'nvidia-smi-xml'
  | 'nvidia-smi-query'
  | 'nvidia-smi-topo'
  | 'nvidia-smi-monitor'
  | 'nvidia-smi-capture'
  | 'prometheus-metrics'
  | 'nccl-log'
  | 'horovod-timeline'
  | 'step-breakdown';

/** One GPU seen in nvidia-smi data, summarised (latest reading, plus series for charts). */
export interface GpuSummary {
  readonly key: string;
  readonly name: string | null;
  readonly index: number | null;
  readonly utilization_gpu_pct: number | null;
  readonly utilization_memory_pct: number | null;
  readonly memory_used_bytes: number | null;
  readonly memory_total_bytes: number | null;
  readonly power_draw_w: number | null;
  readonly power_limit_w: number | null;
  readonly temperature_gpu_c: number | null;
  readonly clocks_sm_mhz: number | null;
  readonly persistence_mode: boolean | null;
  readonly samples: number;
  /** Utilization of every sample in input order, for the utilization chart. */
  readonly utilization_series_pct: readonly number[];
  /** Seconds since the first timestamped sample, parallel to the series; null when samples carry no timestamp. */
  readonly utilization_series_t_s: readonly number[] | null;
  readonly source: string;
}

/** NCCL summary for the report (counts per transport kind, bus bandwidth). */
export interface NcclSummary {
  readonly file: string;
  readonly version: string | null;
  readonly network: string | null;
  readonly nranks: number | null;
  readonly nodes: number;
  readonly transports: Readonly<Record<string, number>>;
  readonly gdrdma_connections: number;
  readonly ring_channels: number;
  readonly avg_bus_bandwidth_gbps: number | null;
  readonly peak_bus_bandwidth_gbps: number | null;
  readonly issues: readonly string[];
  readonly warnings: readonly string[];
}

/** Kernel-type breakdown of one run. */
export interface RunKernelTypes {
  /** The directory (multi-rank run) or file the ranks came from. */
  readonly run: string;
  readonly ranks: number[];
  readonly rows: KernelTypeRow[];
}

/**
 * One run's own verdict: a trace run (a directory of distinct ranks, or one trace) or any other
 * input file (a step log, an nvidia-smi or exporter file, a log). Unrelated runs given together
 * each get theirs.
 */
export interface RunVerdict {
  readonly run: string;
  readonly inputs: readonly string[];
  readonly verdict: Bottleneck;
  /** Id of the run's first (highest-impact) finding. */
  readonly first_finding: string | null;
}

/** The whole diagnosis; `--json` prints it (with `traces` flattened per rank). */
export interface DoctorReport {
  readonly inputs: { path: string; kind: InputKind }[];
  readonly warnings: string[];
  readonly traces: TraceRankAnalysis[];
  /** HTA kernel-type breakdown per run (a directory of ranks, or a single trace), summed over its ranks. */
  readonly kernel_types: RunKernelTypes[];
  readonly gpus: GpuSummary[];
  readonly gpu_samples: GpuSample[];
  readonly topology: Topology | null;
  readonly nccl: NcclSummary[];
  readonly horovod: HorovodTimeline[];
  readonly steps: RankStepSummary[];
  readonly findings: Finding[];
  /** The resource that limits the run most, by summed estimated impact; "healthy" when nothing stands out, "no-data" when nothing was measured. */
  readonly verdict: Bottleneck;
  /** Verdict per run (see RunVerdict), in input order. */
  readonly runs: readonly RunVerdict[];
}

/**
 * Findings that say an input held nothing to measure. When they are all there is, the verdict is
 * "no-data", not "healthy": a script gating on the verdict must not pass an empty trace.
 */
const NO_DATA_FINDINGS: ReadonlySet<string> = new Set(['trace.no-gpu-activity']);

/**
 * Picks the limiting resource: the bottleneck with the largest summed impact over the issues
 * (warnings, critical) when that reaches 5%; else the compute-bound note's (compute is the largest
 * share and nothing needs fixing); else "no-data" when every finding says its input held nothing
 * to measure; else "healthy". Pure.
 */
export function verdictOf(findings: readonly Finding[]): Bottleneck {
  const byKind = new Map<Bottleneck, number>();
  for (const f of findings)
    if (f.severity !== 'info') byKind.set(f.bottleneck, (byKind.get(f.bottleneck) ?? 0) + f.impact_pct);
  const best = [...byKind.entries()].sort((a, b) => b[1] - a[1])[0];
  if (best && best[1] >= 5) return best[0];
  const compute = [...findings]
    .filter((f) => f.id.endsWith('.compute-bound'))
    .sort((a, b) => b.impact_pct - a.impact_pct)[0];
  if (compute) return compute.bottleneck;
  return findings.length > 0 && findings.every((f) => NO_DATA_FINDINGS.has(f.id)) ? 'no-data' : 'healthy';
}

/** Plain words for each bottleneck. */
export const BOTTLENECK_TEXT: Readonly<Record<Bottleneck, string>> = {
  'gpu-compute': 'GPU compute (compute-bound)',
  'cpu-compute': 'CPU compute (compute-bound)',
  compute: 'compute (compute-bound)',
  'gpu-memory': 'GPU memory',
  'input-pipeline': 'input pipeline / CPU',
  'host-overhead': 'host-side launch / per-step overhead',
  'sync-points': 'synchronisation points',
  'host-device-copy': 'host-device copies',
  'cpu-contention': 'CPU contention (thread oversubscription)',
  communication: 'communication / network',
  system: 'system configuration',
  healthy: 'nothing stands out',
  'no-data': 'unknown: the inputs hold no measured activity (see the notes)',
};
