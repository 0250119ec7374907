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
import type { DoctorReport, InputKind, RunKernelTypes, RunVerdict } from './report/model.js';
import { verdictOf } from './report/model.js';

/**
 * A directory is one multi-rank run, unless its traces say otherwise: traces that name different
 * world sizes belong to different runs, and a rank seen twice means unrelated single-rank traces
 * (each is then analysed on its own).
 */
function splitRuns(groups: ReadonlyMap<string, KinetoRank[]>): { run: string; ranks: KinetoRank[] }[] {
  const runs: { run: string; ranks: KinetoRank[] }[] = [];
  for (const [group, all] of groups) {
    const byWorld = new Map<number | undefined, KinetoRank[]>();
    for (const r of all) byWorld.set(r.worldSize, [...(byWorld.get(r.worldSize) ?? []), r]);
    for (const [world, ranks] of byWorld) {
      const distinct = new Set(ranks.map((r) => r.rank)).size === ranks.length;
      const name = byWorld.size > 1 ? `${group} (world size ${world ?? '?'})` : group;
      if (distinct) runs.push({ run: name, ranks });
      else for (const r of ranks) runs.push({ run: r.file, ranks: [r] });
    }
  }
  return runs;
}

/** The GPU a per-GPU nvidia-smi finding is about ("GPU 3 (NVIDIA A100): ..." titles), or undefined. */
function gpuLabel(f: Finding): string | undefined {
  return /^GPU [^:]*?(?=: )/.exec(f.title)?.[0];
}

/**
 * Collapses a finding repeated on many ranks (trace) or GPUs (nvidia-smi, exporters) into the
 * worst instance, naming the others, so one cause is listed once however many devices show it.
 */
export function mergeRepeated(findings: readonly Finding[], perDevice: (f: Finding) => boolean): Finding[] {
  const out: Finding[] = [];
  const byId = new Map<string, Finding[]>();
  for (const f of findings) {
    if (!perDevice(f)) {
      out.push(f);
      continue;
    }
    byId.set(f.id, [...(byId.get(f.id) ?? []), f]);
  }
  for (const list of byId.values()) {
    const worst = [...list].sort((a, b) => b.impact_pct - a.impact_pct)[0]!;
    const others = list.filter((f) => f !== worst);
    if (others.length === 0) {
      out.push(worst);
      continue;
    }
    const labels = list.map(gpuLabel);
    const allGpus = labels.every((l) => l !== undefined);
    const names = others.map((f) => (allGpus ? `${gpuLabel(f)} in ${f.source}` : f.source));
    const title = allGpus
      ? `${list.length} GPUs (${[...new Set(labels)].slice(0, 6).join(', ')}` +
        `${list.length > 6 ? ', ...' : ''})${worst.title.slice(gpuLabel(worst)!.length)}`
      : worst.title;
    out.push({
      ...worst,
      title,
      evidence: [
        ...worst.evidence,
        `also on ${others.length} other ${allGpus ? 'GPU' : 'trace'}(s): ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`,
      ],
    });
  }
  return out;
}

function runVerdict(run: string, files: string[], ranked: readonly Finding[]): RunVerdict {
  return { run, inputs: files, verdict: verdictOf(ranked), first_finding: ranked[0]?.id ?? null };
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
  const parts: ReportParts = {
    findings: [],
    trace_groups: new Map(),
    gpus: [],
    gpu_samples: [],
    topology: null,
    nccl: [],
    horovod: [],
    steps: [],
  };

  for (const file of files) {
    let row;
    try {
      row = detectInput(await readHead(file.path));
    } catch (error) {
      warnings.push(`${file.path}: unreadable (${message(error)}); skipped`);
      continue;
    }
    if (!row) {
      warnings.push(
        `${file.path}: not a recognised input (PyTorch trace, nvidia-smi output, GPU exporter ` +
          `metrics, NCCL log, Horovod timeline or step breakdown); skipped`,
      );
      continue;
    }
    try {
      if (await row.handle(file, parts, warn)) inputs.push({ path: file.path, kind: row.kind });
    } catch (error) {
      warnings.push(`${file.path}: could not be read as ${row.kind} (${message(error)}); skipped`);
    }
  }

  const findings = parts.findings;
  const runs: RunVerdict[] = [];
  const inTraceRun = new Set<string>();
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
    const merged = rankFindings([
      ...mergeRepeated(runFindings, (f) => f.id !== 'trace.straggler-rank'),
      ...stragglerFindings(analysed),
    ]);
    findings.push(...merged);
    runs.push(
      runVerdict(
        run,
        ranks.map((r) => r.file),
        merged,
      ),
    );
    for (const r of ranks) inTraceRun.add(r.file);
    traces.push(...analysed);
    if (kernelTimes.size > 0)
      kernelTypes.push({ run, ranks: analysed.map((a) => a.rank), rows: kernelTypeTable(kernelTimes) });
  }
  for (const i of inputs) {
    if (!inTraceRun.has(i.path))
      runs.push(runVerdict(i.path, [i.path], rankFindings(parts.findings.filter((f) => f.source === i.path))));
  }
  const ranked = rankFindings(mergeRepeated(findings, (f) => f.id.startsWith('smi.')));
  return {
    inputs,
    warnings,
    traces,
    kernel_types: kernelTypes,
    gpus: parts.gpus,
    gpu_samples: parts.gpu_samples,
    topology: parts.topology,
    nccl: parts.nccl,
    horovod: parts.horovod,
    steps: parts.steps.length ? summarizeSteps({ steps: parts.steps }) : [],
    findings: ranked,
    verdict: verdictOf(ranked),
    runs,
  };
}
