import { stat } from 'node:fs/promises';
import { kernelTypeTable, kernelTypeTimes } from './analyze/hta/breakdown.js';
import { prepareRank } from './analyze/hta/prepare.js';
import type { TraceRankAnalysis } from './analyze/trace-rank.js';
import { analyzeTraceRank } from './analyze/trace-rank.js';
import { detectKind } from './detect.js';
import type { Finding } from './findings/finding.js';
import { rankFindings } from './findings/finding.js';
import { horovodFindings, ncclFindings, stepBreakdownFindings } from './findings/comm-findings.js';
import { nvidiaSmiFindings } from './findings/smi-findings.js';
import { stragglerFindings, traceRankFindings } from './findings/trace-findings.js';
import { expandInputs, readAllText, readHead } from './io/read-files.js';
import { loadKinetoTrace } from './io/load-trace.js';
import { parseHorovodTimeline } from './parse/horovod-timeline.js';
import { parseNcclLog } from './parse/nccl-log.js';
import type { NvidiaSmiData } from './parse/nvidia-smi/capture.js';
import { parseCapture, parseNvidiaSmiOutput } from './parse/nvidia-smi/capture.js';
import { parseStepBreakdown, summarizeSteps } from './parse/step-breakdown.js';
import type { StepRecord } from './parse/step-breakdown.js';
import type { DoctorReport, InputKind, NcclSummary, RunKernelTypes } from './report/model.js';
import { verdictOf } from './report/model.js';
import { summarizeGpus } from './summarize-gpus.js';
import type { KinetoRank } from './trace/kineto-collector.js';

/** Non-trace inputs are read whole; beyond this size they are skipped with a warning. */
const MAX_TEXT_INPUT_BYTES = 256 * 1024 * 1024;

const SMI_COMMAND: Partial<Record<InputKind, string>> = {
  'nvidia-smi-csv': 'nvidia-smi --query-gpu', 'nvidia-smi-xml': 'nvidia-smi -q -x', 'nvidia-smi-query': 'nvidia-smi -q',
  'nvidia-smi-topo': 'nvidia-smi topo -m', 'nvidia-smi-monitor': 'nvidia-smi dmon',
};

/**
 * A directory is one multi-rank run, unless its traces repeat a rank (then they are unrelated
 * single-rank traces and each is analysed on its own).
 */
function splitRuns(groups: ReadonlyMap<string, KinetoRank[]>): { run: string; ranks: KinetoRank[] }[] {
  const runs: { run: string; ranks: KinetoRank[] }[] = [];
  for (const [group, ranks] of groups) {
    const distinct = new Set(ranks.map((r) => r.rank)).size === ranks.length;
    if (distinct) runs.push({ run: group, ranks });
    else for (const r of ranks) runs.push({ run: r.file, ranks: [r] });
  }
  return runs;
}

/** Collapses one per-rank finding repeated on many ranks into the worst instance, naming the others. */
function mergeAcrossRanks(findings: readonly Finding[]): Finding[] {
  const out: Finding[] = [];
  const byId = new Map<string, Finding[]>();
  for (const f of findings) {
    if (!f.id.startsWith('trace.') || f.id === 'trace.straggler-rank') { out.push(f); continue; }
    byId.set(f.id, [...(byId.get(f.id) ?? []), f]);
  }
  for (const list of byId.values()) {
    const worst = [...list].sort((a, b) => b.impact_pct - a.impact_pct)[0]!;
    const others = list.filter((f) => f !== worst);
    out.push(others.length === 0 ? worst : { ...worst, evidence: [...worst.evidence, `also on ${others.length} other trace(s): ${others.map((f) => f.source).slice(0, 5).join(', ')}${others.length > 5 ? ', ...' : ''}`] });
  }
  return out;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Reads every input (files, or directories walked recursively), recognises each by content and
 * runs the analyses. Never throws for bad inputs: an unreadable or unknown file becomes a warning
 * naming it and the rest is still analysed. Kineto traces are streamed (bounded memory).
 */
export async function runDoctor(paths: readonly string[]): Promise<DoctorReport> {
  const warnings: string[] = [];
  const inputs: { path: string; kind: InputKind }[] = [];
  const { files, missing } = await expandInputs(paths);
  for (const m of missing) warnings.push(`${m}: no such file or directory`);
  const traceGroups = new Map<string, KinetoRank[]>();
  const findings: Finding[] = [];
  const gpus: DoctorReport['gpus'] = [];
  const gpuSamples: DoctorReport['gpu_samples'] = [];
  let topology: DoctorReport['topology'] = null;
  const nccl: NcclSummary[] = [];
  const horovod: DoctorReport['horovod'] = [];
  const stepRecords: StepRecord[] = [];

  for (const { path, group } of files) {
    let kind: InputKind | undefined;
    try {
      kind = detectKind(await readHead(path));
    } catch (error) {
      warnings.push(`${path}: unreadable (${message(error)}); skipped`);
      continue;
    }
    if (!kind) {
      warnings.push(`${path}: not a recognised input (PyTorch trace, nvidia-smi output, NCCL log, Horovod timeline or step breakdown); skipped`);
      continue;
    }
    try {
      if (kind === 'pytorch-trace') {
        const { data, complete } = await loadKinetoTrace(path);
        if (!complete) warnings.push(`${path}: trace ends before its JSON is closed; analysed the events read so far`);
        traceGroups.set(group, [...(traceGroups.get(group) ?? []), data]);
        inputs.push({ path, kind });
        continue;
      }
      if ((await stat(path)).size > MAX_TEXT_INPUT_BYTES) {
        warnings.push(`${path}: ${kind} input larger than ${MAX_TEXT_INPUT_BYTES / 2 ** 20} MiB; skipped`);
        continue;
      }
      const text = await readAllText(path);
      if (kind === 'nccl-log') {
        const log = parseNcclLog(text);
        findings.push(...ncclFindings(log, path));
        const peak = log.test_rows.reduce((m, r) => Math.max(m, r.busbw_gbps, r.inplace_busbw_gbps), 0);
        nccl.push({
          file: path, version: log.version ?? null, network: log.network ?? null, nranks: log.nranks ?? null,
          nodes: new Set(log.rank_host.values()).size, transports: log.transports,
          gdrdma_connections: log.connections.filter((c) => c.gdrdma).length, ring_channels: log.ring_channels,
          avg_bus_bandwidth_gbps: log.avg_bus_bandwidth_gbps ?? null, peak_bus_bandwidth_gbps: log.test_rows.length ? peak : null,
          issues: log.issues.map((i) => i.id), warnings: log.warnings.slice(0, 20),
        });
      } else if (kind === 'horovod-timeline') {
        const t = parseHorovodTimeline(text);
        if (t.truncated) warnings.push(`${path}: Horovod timeline is not terminated (job running or killed); analysed the complete events`);
        horovod.push(t);
        findings.push(...horovodFindings(t, path));
      } else if (kind === 'step-breakdown') {
        const b = parseStepBreakdown(JSON.parse(text));
        stepRecords.push(...b.steps);
        findings.push(...stepBreakdownFindings(b, path));
      } else {
        const data: NvidiaSmiData = kind === 'nvidia-smi-capture' ? parseCapture(text) : { samples: [], processes: [] };
        if (kind !== 'nvidia-smi-capture') parseNvidiaSmiOutput(text, SMI_COMMAND[kind] ?? '', data);
        if (data.samples.length === 0 && !data.topology && data.processes.length === 0) {
          warnings.push(`${path}: looks like ${kind} but no GPU values could be read; skipped`);
          continue;
        }
        topology ??= data.topology ?? null;
        gpuSamples.push(...data.samples);
        gpus.push(...summarizeGpus(data.samples, path));
        findings.push(...nvidiaSmiFindings(data, path));
      }
      inputs.push({ path, kind });
    } catch (error) {
      warnings.push(`${path}: could not be read as ${kind} (${message(error)}); skipped`);
    }
  }

  const traces: TraceRankAnalysis[] = [];
  const kernelTypes: RunKernelTypes[] = [];
  for (const { run, ranks } of splitRuns(traceGroups)) {
    const kernelTimes = new Map<string, number>();
    const stepNames = new Set<string>();
    for (const r of ranks) for (const n of r.stepNames) stepNames.add(n);
    const analysed: TraceRankAnalysis[] = [];
    const runFindings: Finding[] = [];
    for (const r of [...ranks].sort((a, b) => a.rank - b.rank)) {
      const prepared = prepareRank(r, stepNames.size);
      kernelTypeTimes(prepared, kernelTimes);
      const a = analyzeTraceRank(prepared);
      analysed.push(a);
      runFindings.push(...traceRankFindings(a));
    }
    findings.push(...mergeAcrossRanks(runFindings), ...stragglerFindings(analysed));
    traces.push(...analysed);
    if (kernelTimes.size > 0) kernelTypes.push({ run, ranks: analysed.map((a) => a.rank), rows: kernelTypeTable(kernelTimes) });
  }
  const ranked = rankFindings(findings);
  return {
    inputs, warnings, traces, kernel_types: kernelTypes, gpus, gpu_samples: gpuSamples, topology, nccl, horovod,
    steps: stepRecords.length ? summarizeSteps({ steps: stepRecords }) : [], findings: ranked, verdict: verdictOf(ranked),
  };
}
