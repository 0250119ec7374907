import { kernelTypeTable, kernelTypeTimes } from './analyze/hta/breakdown.js';
import { prepareRank } from './analyze/hta/prepare.js';
import type { TraceRankAnalysis } from './analyze/trace-rank.js';
import { analyzeTraceRank } from './analyze/trace-rank.js';
import type { Finding } from './findings/finding.js';
import { rankFindings } from './findings/finding.js';
import { stragglerFindings, traceRankFindings } from './findings/trace-findings.js';
import type { ReportParts } from './inputs/handler.js';
import { detectInput } from './inputs/table.js';
import { expandInputs, readHead } from './io/read-files.js';
import type { KinetoRank } from './parse/kineto/kineto-collector.js';
import { summarizeSteps } from './parse/step-breakdown.js';
import type { DoctorReport, InputKind, RunKernelTypes } from './report/model.js';
import { verdictOf } from './report/model.js';

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
 * Reads every input (files, or directories walked recursively), recognises each by content (the
 * handler table of inputs/table.ts) and runs the analyses. Never throws for bad inputs: an unreadable or unknown file becomes a warning
 * naming it and the rest is still analysed. Kineto traces are streamed (bounded memory).
 */
export async function runDoctor(paths: readonly string[]): Promise<DoctorReport> {
  const warnings: string[] = [];
  const warn = (warning: string): void => void warnings.push(warning);
  const inputs: { path: string; kind: InputKind }[] = [];
  const { files, missing } = await expandInputs(paths);
  for (const m of missing) warnings.push(`${m}: no such file or directory`);
  const parts: ReportParts = { findings: [], trace_groups: new Map(), gpus: [], gpu_samples: [], topology: null, nccl: [], horovod: [], steps: [] };

  for (const file of files) {
    let row;
    try {
      row = detectInput(await readHead(file.path));
    } catch (error) {
      warnings.push(`${file.path}: unreadable (${message(error)}); skipped`);
      continue;
    }
    if (!row) {
      warnings.push(`${file.path}: not a recognised input (PyTorch trace, nvidia-smi output, NCCL log, Horovod timeline or step breakdown); skipped`);
      continue;
    }
    try {
      if (await row.handle(file, parts, warn)) inputs.push({ path: file.path, kind: row.kind });
    } catch (error) {
      warnings.push(`${file.path}: could not be read as ${row.kind} (${message(error)}); skipped`);
    }
  }

  const findings = parts.findings;
  const traces: TraceRankAnalysis[] = [];
  const kernelTypes: RunKernelTypes[] = [];
  for (const { run, ranks } of splitRuns(parts.trace_groups)) {
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
    inputs, warnings, traces, kernel_types: kernelTypes, gpus: parts.gpus, gpu_samples: parts.gpu_samples, topology: parts.topology,
    nccl: parts.nccl, horovod: parts.horovod, steps: parts.steps.length ? summarizeSteps({ steps: parts.steps }) : [], findings: ranked,
    verdict: verdictOf(ranked),
  };
}
