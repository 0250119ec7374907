import type { GpuSample } from './gpu-sample.js';
import { compact, parseNumber } from './gpu-sample.js';

/** One `nvidia-smi pmon` row: a process on a GPU and its SM/memory utilization. */
export interface ProcessSample {
  readonly gpu: number;
  readonly pid: number;
  readonly type: string;
  readonly sm_pct?: number;
  readonly mem_pct?: number;
  readonly command: string;
}

/** Parsed `nvidia-smi dmon` / `pmon` output (`# gpu ...` header, `# Idx ...` units line, rows). */
export interface MonitorData {
  readonly kind: 'dmon' | 'pmon';
  readonly samples: GpuSample[];
  readonly processes: ProcessSample[];
}

/** Pure; returns undefined when there is no `# gpu` header. Rows of "-" become absent values. */
export function parseMonitor(text: string): MonitorData | undefined {
  const lines = text.split(/\r?\n/);
  const hi = lines.findIndex((l) => /^#\s*gpu\s+/i.test(l));
  if (hi < 0) return undefined;
  const cols = lines[hi]!.replace(/^#\s*/, '')
    .trim()
    .split(/\s+/)
    .map((c) => c.toLowerCase());
  const kind = cols.includes('pid') ? 'pmon' : 'dmon';
  const samples: GpuSample[] = [];
  const processes: ProcessSample[] = [];
  for (const line of lines.slice(hi + 1)) {
    if (line.startsWith('#')) {
      if (/^#\s*gpu\s+/i.test(line) || /^#\s*idx/i.test(line)) continue;
      continue;
    }
    const cells = line.trim().split(/\s+/);
    if (cells.length < 2 || !/^\d+$/.test(cells[0]!)) continue;
    const v = new Map<string, string>();
    cols.forEach((c, i) => v.set(c, cells[i] ?? '-'));
    const num = (k: string) => parseNumber(v.get(k));
    if (kind === 'pmon') {
      const pid = num('pid');
      if (pid === undefined) continue;
      processes.push({
        gpu: num('gpu') ?? 0,
        pid,
        type: v.get('type') ?? '-',
        sm_pct: num('sm'),
        mem_pct: num('mem'),
        command: cells.slice(cols.indexOf('command')).join(' '),
      });
    } else {
      samples.push(
        compact({
          source: 'dmon',
          index: num('gpu'),
          power_draw_w: num('pwr'),
          temperature_gpu_c: num('gtemp'),
          utilization_gpu_pct: num('sm'),
          utilization_memory_pct: num('mem'),
          clocks_mem_mhz: num('mclk'),
          clocks_sm_mhz: num('pclk'),
        }),
      );
    }
  }
  return { kind, samples, processes };
}
