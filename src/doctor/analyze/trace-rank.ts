import type { KinetoRank } from '../parse/kineto/kineto-collector.js';
import type { HostThreads } from '../parse/step-summary.js';
import { KIND_BY_CODE } from '../parse/kineto/kernel-kind.js';
import type { KernelKind } from '../parse/kineto/kernel-kind.js';
import type { TemporalBreakdown } from './hta/breakdown.js';
import { commCompOverlapPct, temporalBreakdown } from './hta/breakdown.js';
import type { LaunchStats, QueueLengthSummary, StreamIdle } from './hta/launch.js';
import { idleBreakdown, launchStats, queueLength } from './hta/launch.js';
import type { PreparedRank } from './hta/prepare.js';
import { gemmPrecision } from './gemm-precision.js';
import type { TimeAttribution } from './attribution.js';
import { attributeCpuSteps, attributeGpuTime } from './attribution.js';
import type { GemmPrecision } from './gemm-precision.js';

/** Host-device copy totals by direction and host memory kind (µs and counts). */
export interface CopyStats {
  readonly htod_pageable_us: number;
  readonly htod_pageable_count: number;
  readonly htod_pinned_us: number;
  readonly dtoh_pageable_us: number;
  readonly dtoh_pageable_count: number;
  readonly dtoh_pinned_us: number;
  readonly dtod_us: number;
}

/** Per-step timing around the step boundary (µs means over analysed steps). */
export interface StepTiming {
  readonly steps: number;
  readonly mean_step_us: number;
  /** GPU idle between the previous step's last activity and this step's first one. */
  readonly mean_gpu_gap_at_step_start_us: number;
  /** Host time spent in `enumerate(DataLoader)` (waiting for the next batch). */
  readonly mean_data_loader_us: number;
}

/** One kernel name's total, for the top-kernels table. */
export interface KernelTotal {
  readonly name: string;
  readonly kind: KernelKind;
  readonly time_us: number;
  readonly count: number;
}

/** Everything the doctor derives from one rank's trace. */
export interface TraceRankAnalysis {
  readonly rank: number;
  readonly file: string;
  readonly device?: string;
  readonly device_compute_major?: number;
  readonly iterations: readonly number[];
  readonly gpu_events: number;
  readonly temporal: TemporalBreakdown | undefined;
  readonly comm_comp_overlap_pct: number | null;
  readonly idle_by_stream: readonly StreamIdle[];
  readonly launch: LaunchStats;
  readonly queue_length: readonly QueueLengthSummary[];
  readonly copies: CopyStats;
  readonly gemm: GemmPrecision;
  readonly top_kernels: readonly KernelTotal[];
  readonly step_timing?: StepTiming;
  /** Total µs of communication kernels (merged per stream, not across streams). */
  readonly comm_kernel_us: number;
  /** GPU time (or, without GPU activity, step time) by cause; shares add up to 100%. */
  readonly attribution?: TimeAttribution;
  /** The host's CPU threads when the trace carries them (`goodput_host`). */
  readonly host?: HostThreads;
}

function copyStats(p: PreparedRank, totals: Map<number, { time: number; count: number }>): CopyStats {
  const s = {
    htod_pageable_us: 0,
    htod_pageable_count: 0,
    htod_pinned_us: 0,
    dtoh_pageable_us: 0,
    dtoh_pageable_count: 0,
    dtoh_pinned_us: 0,
    dtod_us: 0,
  };
  for (const [id, t] of totals) {
    const name = p.source.names.name(id);
    if (!name.startsWith('Memcpy')) continue;
    if (name.startsWith('Memcpy HtoD')) {
      if (/Pageable/.test(name)) {
        s.htod_pageable_us += t.time;
        s.htod_pageable_count += t.count;
      } else s.htod_pinned_us += t.time;
    } else if (name.startsWith('Memcpy DtoH')) {
      if (/Pageable/.test(name)) {
        s.dtoh_pageable_us += t.time;
        s.dtoh_pageable_count += t.count;
      } else s.dtoh_pinned_us += t.time;
    } else if (name.startsWith('Memcpy DtoD')) s.dtod_us += t.time;
  }
  return s;
}

/** Index of the step whose [ts, end) contains t, by binary search over steps sorted by start; -1 if none. */
function stepAt(steps: readonly { ts_us: number; end_us: number }[], t: number): number {
  let lo = 0,
    hi = steps.length - 1,
    found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid]!.ts_us <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && t < steps[found]!.end_us ? found : -1;
}

function stepTiming(p: PreparedRank): StepTiming | undefined {
  const r: KinetoRank = p.source;
  const steps = [
    ...new Map(r.steps.filter((s) => p.iterations.includes(s.iteration)).map((s) => [s.iteration, s])).values(),
  ].sort((a, b) => a.ts_us - b.ts_us);
  if (steps.length === 0 || p.kept.length === 0) return undefined;
  const g = r.gpu;
  const firstStart = new Array<number>(steps.length).fill(Infinity);
  const lastEnd = new Array<number>(steps.length).fill(-Infinity);
  for (const i of p.kept) {
    const hi = p.hostByCorrelation.get(g.correlation.get(i));
    if (hi === undefined) continue;
    const launch = r.host.ts.get(hi);
    const k = stepAt(steps, launch);
    if (k < 0) continue;
    firstStart[k] = Math.min(firstStart[k]!, g.ts.get(i));
    lastEnd[k] = Math.max(lastEnd[k]!, g.end.get(i));
  }
  let gapSum = 0,
    gapN = 0;
  for (let k = 1; k < steps.length; k++) {
    if (Number.isFinite(firstStart[k]!) && Number.isFinite(lastEnd[k - 1]!)) {
      gapSum += Math.max(0, firstStart[k]! - lastEnd[k - 1]!);
      gapN++;
    }
  }
  let loader = 0;
  const dts = r.dataLoader.ts.view();
  const dend = r.dataLoader.end.view();
  for (let i = 0; i < dts.length; i++) if (stepAt(steps, dts[i]!) >= 0) loader += dend[i]! - dts[i]!;
  const totalStep = steps.reduce((acc, s) => acc + (s.end_us - s.ts_us), 0);
  return {
    steps: steps.length,
    mean_step_us: totalStep / steps.length,
    mean_gpu_gap_at_step_start_us: gapN === 0 ? 0 : gapSum / gapN,
    mean_data_loader_us: loader / steps.length,
  };
}

/** Runs every per-rank analysis on a prepared rank. Pure. */
export function analyzeTraceRank(p: PreparedRank): TraceRankAnalysis {
  const g = p.source.gpu;
  const totals = new Map<number, { time: number; count: number }>();
  let comm = 0;
  for (const i of p.kept) {
    const id = g.name.get(i);
    const t = totals.get(id) ?? { time: 0, count: 0 };
    const dur = g.end.get(i) - g.ts.get(i);
    t.time += dur;
    t.count++;
    totals.set(id, t);
    if (KIND_BY_CODE[g.kind.get(i)] === 'communication') comm += dur;
  }
  const kindOf = new Map<number, KernelKind>();
  for (const i of p.kept) kindOf.set(g.name.get(i), KIND_BY_CODE[g.kind.get(i)]!);
  const top = [...totals.entries()]
    .sort((a, b) => b[1].time - a[1].time)
    .slice(0, 10)
    .map(([id, t]) => ({ name: p.source.names.name(id), kind: kindOf.get(id)!, time_us: t.time, count: t.count }));
  const named = [...totals.entries()].map(([id, t]) => ({ name: p.source.names.name(id), time_us: t.time }));
  return {
    rank: p.source.rank,
    file: p.source.file,
    device: p.source.deviceName,
    device_compute_major: p.source.deviceComputeMajor,
    iterations: p.iterations,
    gpu_events: p.kept.length,
    temporal: temporalBreakdown(p),
    comm_comp_overlap_pct: commCompOverlapPct(p),
    idle_by_stream: idleBreakdown(p),
    launch: launchStats(p),
    queue_length: queueLength(p),
    copies: copyStats(p, totals),
    gemm: gemmPrecision(named),
    top_kernels: top,
    step_timing: stepTiming(p),
    comm_kernel_us: comm,
    attribution: attributeGpuTime(p) ?? attributeCpuSteps(p.source),
    ...(p.source.hostThreads ? { host: p.source.hostThreads } : {}),
  };
}
