import { groupByGpu } from './findings/smi-findings.js';
import type { GpuSample } from './parse/nvidia-smi/gpu-sample.js';
import type { GpuSummary } from './report/model.js';

const SOURCE_PRIORITY = ['query-gpu csv', '-q -x', '-q', 'dcgm-exporter', 'nvidia_gpu_exporter', 'dmon'];

/** nvidia-smi timestamps look like "2024/01/31 12:00:01.250"; returns ms since the epoch (UTC) or NaN. */
function parseTimestamp(t: string | undefined): number {
  const m = t ? /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/.exec(t.trim()) : null;
  if (!m) return NaN;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) + Number(`0.${m[7] ?? '0'}`) * 1000;
}

/** Seconds since the first sample when every sample has a parseable, non-decreasing timestamp. */
function timeAxis(samples: readonly GpuSample[]): number[] | null {
  const ms = samples.map((s) => parseTimestamp(s.timestamp));
  if (ms.length < 2 || ms.some((x, i) => Number.isNaN(x) || (i > 0 && x < ms[i - 1]!))) return null;
  return ms.map((x) => (x - ms[0]!) / 1000);
}

/**
 * One summary per GPU of one input: values from the last sample of the most complete source
 * (`--query-gpu` CSV, then XML, then `-q`, then dmon); the utilization series keeps every sample. Pure.
 */
export function summarizeGpus(samples: readonly GpuSample[], file: string): GpuSummary[] {
  const out: GpuSummary[] = [];
  for (const [key, list] of groupByGpu(samples)) {
    const rank = (s: GpuSample) => {
      const i = SOURCE_PRIORITY.indexOf(s.source);
      return i < 0 ? SOURCE_PRIORITY.length : i;
    };
    const best = Math.min(...list.map(rank));
    const pick = list.filter((s) => rank(s) === best);
    const last = pick[pick.length - 1]!;
    const field = <K extends keyof GpuSample>(k: K): GpuSample[K] | undefined => {
      for (let i = pick.length - 1; i >= 0; i--) if (pick[i]![k] !== undefined) return pick[i]![k];
      for (let i = list.length - 1; i >= 0; i--) if (list[i]![k] !== undefined) return list[i]![k];
      return undefined;
    };
    out.push({
      key: `${file}#${key}`,
      name: field('name') ?? null,
      index: field('index') ?? null,
      utilization_gpu_pct: field('utilization_gpu_pct') ?? null,
      utilization_memory_pct: field('utilization_memory_pct') ?? null,
      memory_used_bytes: field('memory_used_bytes') ?? null,
      memory_total_bytes: field('memory_total_bytes') ?? null,
      power_draw_w: field('power_draw_w') ?? null,
      power_limit_w: field('power_limit_w') ?? null,
      temperature_gpu_c: field('temperature_gpu_c') ?? null,
      clocks_sm_mhz: field('clocks_sm_mhz') ?? null,
      persistence_mode: field('persistence_mode') ?? null,
      samples: list.length,
      utilization_series_pct: list.map((s) => s.utilization_gpu_pct).filter((x): x is number => x !== undefined),
      utilization_series_t_s: timeAxis(list.filter((s) => s.utilization_gpu_pct !== undefined)),
      source: `${file} (${last.source})`,
    });
  }
  return out;
}
