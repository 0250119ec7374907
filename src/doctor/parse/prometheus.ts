/**
 * Prometheus text exposition (format 0.0.4) as the GPU exporters write it: nvidia_gpu_exporter
 * (`nvidia_smi_*`, one `uuid` label) and NVIDIA dcgm-exporter (`DCGM_FI_*`, labels `gpu`, `UUID`,
 * `modelName`, `Hostname`). A file may hold several scrapes one after another (e.g. `curl` in a
 * loop): a metric seen again for the same GPU starts that GPU's next sample.
 */
import type { GpuSample } from './nvidia-smi/gpu-sample.js';
import { compact } from './nvidia-smi/gpu-sample.js';

/** One exposition line. */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly timestamp_ms?: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LINE_RE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+(-?\\d+))?\\s*$`);
const TYPED_RE = new RegExp(`^# (HELP|TYPE) ${NAME}( |$)`);
const VALUE_RE = /\s[-+]?(\d|\.\d|NaN|Inf)\S*(\s+-?\d+)?$/i;

function parseValue(text: string): number | undefined {
  if (/^[+-]?Inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^NaN$/i.test(text)) return NaN;
  const v = Number(text);
  return Number.isNaN(v) ? undefined : v;
}

function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < text.length && (m = re.exec(text)) !== null) {
    labels[m[1]!] = m[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    pos = re.lastIndex;
    if (m[3] === '') break;
  }
  return pos >= text.trimEnd().length ? labels : undefined;
}

/** Parses exposition text; lines that are not samples (comments, blanks, junk) are skipped. Pure. */
export function parseExposition(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE_RE.exec(line);
    if (!m) continue;
    const labels = m[2] === undefined ? {} : parseLabels(m[2]);
    const value = parseValue(m[3]!);
    if (!labels || value === undefined) continue;
    out.push({ name: m[1]!, labels, value, ...(m[4] !== undefined ? { timestamp_ms: Number(m[4]) } : {}) });
  }
  return out;
}

/**
 * True when the first lines of `head` are exposition text only: `# HELP` / `# TYPE` comments and
 * `name{labels} value` lines, at least two of them (nvidia-smi monitors, captures and logs all have
 * lines that are neither). Pure.
 */
export function looksLikeExposition(head: string): boolean {
  const lines = head
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (!head.endsWith('\n') && lines.length > 1) lines.pop(); // the head may cut the last line
  const first = lines.slice(0, 20);
  let typed = 0,
    samples = 0;
  for (const l of first) {
    if (TYPED_RE.test(l)) typed++;
    else if (!l.startsWith('#') && LINE_RE.test(l) && VALUE_RE.test(l)) samples++;
    else if (!l.startsWith('#')) return false;
  }
  return typed + samples >= 2 && (typed > 0 || samples >= 2);
}

type Setter = (s: GpuSample, v: number, labels: Readonly<Record<string, string>>) => void;

const MIB = 2 ** 20;

/** What each exporter metric means for a GpuSample (units converted to the sample's). */
const METRICS: Readonly<Record<string, Setter>> = {
  nvidia_smi_utilization_gpu_ratio: (s, v) => {
    s.utilization_gpu_pct = Math.round(v * 1000) / 10;
  },
  nvidia_smi_utilization_memory_ratio: (s, v) => {
    s.utilization_memory_pct = Math.round(v * 1000) / 10;
  },
  nvidia_smi_memory_used_bytes: (s, v) => {
    s.memory_used_bytes = v;
  },
  nvidia_smi_memory_total_bytes: (s, v) => {
    s.memory_total_bytes = v;
  },
  nvidia_smi_power_draw_watts: (s, v) => {
    s.power_draw_w = v;
  },
  nvidia_smi_enforced_power_limit_watts: (s, v) => {
    s.power_limit_w = v;
  },
  nvidia_smi_temperature_gpu: (s, v) => {
    s.temperature_gpu_c = v;
  },
  nvidia_smi_clocks_current_sm_clock_hz: (s, v) => {
    s.clocks_sm_mhz = v / 1e6;
  },
  nvidia_smi_clocks_max_sm_clock_hz: (s, v) => {
    s.clocks_max_sm_mhz = v / 1e6;
  },
  nvidia_smi_persistence_mode: (s, v) => {
    s.persistence_mode = v === 1;
  },
  nvidia_smi_index: (s, v) => {
    s.index = v;
  },
  nvidia_smi_pcie_link_gen_current: (s, v) => {
    s.pcie_gen_current = v;
  },
  nvidia_smi_pcie_link_gen_max: (s, v) => {
    s.pcie_gen_max = v;
  },
  nvidia_smi_pcie_link_width_current: (s, v) => {
    s.pcie_width_current = v;
  },
  nvidia_smi_pcie_link_width_max: (s, v) => {
    s.pcie_width_max = v;
  },
  nvidia_smi_gpu_info: (s, _v, l) => {
    if (l['name']) s.name = l['name'];
    if (l['pci_bus_id']) s.bus_id = l['pci_bus_id'];
  },
  DCGM_FI_DEV_GPU_UTIL: (s, v) => {
    s.utilization_gpu_pct = v;
  },
  DCGM_FI_DEV_MEM_COPY_UTIL: (s, v) => {
    s.utilization_memory_pct = v;
  },
  DCGM_FI_DEV_FB_USED: (s, v) => {
    s.memory_used_bytes = v * MIB;
  },
  DCGM_FI_DEV_POWER_USAGE: (s, v) => {
    s.power_draw_w = v;
  },
  DCGM_FI_DEV_POWER_MGMT_LIMIT: (s, v) => {
    s.power_limit_w = v;
  },
  DCGM_FI_DEV_GPU_TEMP: (s, v) => {
    s.temperature_gpu_c = v;
  },
  DCGM_FI_DEV_SM_CLOCK: (s, v) => {
    s.clocks_sm_mhz = v;
  },
  DCGM_FI_DEV_MEM_CLOCK: (s, v) => {
    s.clocks_mem_mhz = v;
  },
  DCGM_FI_DEV_XID_ERRORS: () => undefined,
  DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS: (s, v) => {
    s.retired_pages = v;
  },
};

/** The exporter metrics the doctor reads (any of them makes a file a GPU exposition). */
export function isGpuMetric(name: string): boolean {
  return name in METRICS || name.startsWith('DCGM_FI_') || name.startsWith('nvidia_smi_');
}

function gpuKey(labels: Readonly<Record<string, string>>): string | undefined {
  return (
    labels['uuid'] ??
    labels['UUID'] ??
    (labels['gpu'] !== undefined ? `${labels['Hostname'] ?? ''}#${labels['gpu']}` : undefined)
  );
}

/**
 * GPU samples from exporter metrics, one per GPU per scrape, in file order. FB used + free (+
 * reserved) is dcgm-exporter's total memory; graphics-engine activity stands in for utilization
 * when DCGM_FI_DEV_GPU_UTIL is not exported. Pure.
 */
export function gpuSamplesFromExposition(samples: readonly PromSample[], source = 'prometheus'): GpuSample[] {
  const perGpu = new Map<string, { current: GpuSample; seen: Set<string>; extra: Map<string, number> }[]>();
  const order: GpuSample[] = [];
  for (const p of samples) {
    if (!isGpuMetric(p.name)) continue;
    const key = gpuKey(p.labels);
    if (key === undefined) continue;
    const list = perGpu.get(key) ?? [];
    perGpu.set(key, list);
    const series = `${p.name}${JSON.stringify(p.labels)}`;
    let cur = list[list.length - 1];
    if (!cur || cur.seen.has(series)) {
      const s: GpuSample = { source };
      if (p.labels['UUID'] ?? p.labels['uuid']) s.uuid = p.labels['UUID'] ?? p.labels['uuid'];
      if (p.labels['gpu'] !== undefined) s.index = Number(p.labels['gpu']);
      if (p.labels['modelName']) s.name = p.labels['modelName'];
      if (p.labels['pci_bus_id']) s.bus_id = p.labels['pci_bus_id'];
      cur = { current: s, seen: new Set(), extra: new Map() };
      list.push(cur);
      order.push(s);
    }
    cur.seen.add(series);
    if (p.timestamp_ms !== undefined && cur.current.timestamp === undefined) {
      const d = new Date(p.timestamp_ms);
      cur.current.timestamp =
        `${d.getUTCFullYear()}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/` +
        `${String(d.getUTCDate()).padStart(2, '0')} ${d.toISOString().slice(11, 23)}`;
    }
    METRICS[p.name]?.(cur.current, p.value, p.labels);
    if (/^DCGM_FI_(DEV_FB_(FREE|USED|RESERVED)|PROF_GR_ENGINE_ACTIVE)$/.test(p.name)) cur.extra.set(p.name, p.value);
  }
  for (const list of perGpu.values()) {
    for (const { current: s, extra } of list) {
      const used = extra.get('DCGM_FI_DEV_FB_USED'),
        free = extra.get('DCGM_FI_DEV_FB_FREE');
      if (s.memory_total_bytes === undefined && used !== undefined && free !== undefined)
        s.memory_total_bytes = (used + free + (extra.get('DCGM_FI_DEV_FB_RESERVED') ?? 0)) * MIB;
      const engine = extra.get('DCGM_FI_PROF_GR_ENGINE_ACTIVE');
      if (s.utilization_gpu_pct === undefined && engine !== undefined)
        s.utilization_gpu_pct = Math.round(engine * 1000) / 10;
    }
  }
  return order.map(compact);
}
