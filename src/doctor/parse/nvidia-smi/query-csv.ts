import type { GpuSample } from './gpu-sample.js';
import { compact, parseBytes, parseFlag, parseNumber } from './gpu-sample.js';

/** The field list the digest recommends (`--query-gpu=utilization.gpu,utilization.memory,memory.total,memory.used`). */
export const DIGEST_QUERY_FIELDS: readonly string[] = [
  'utilization.gpu',
  'utilization.memory',
  'memory.total',
  'memory.used',
];

const NAME_RE = /\b(NVIDIA|Tesla|GeForce|Quadro|RTX|A100|H100|Radeon)\b/i;

function splitCsvLine(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

function isHeader(cells: readonly string[]): boolean {
  return cells.some(
    (c) =>
      /^[a-z_]+(\.[a-z_0-9]+)+( \[[^\]]+\])?$/i.test(c) || /^(name|index|uuid|timestamp|pstate|count)( \[|$)/i.test(c),
  );
}

/** Guesses fields of a headerless row from the units nvidia-smi prints (`%`, `MiB`, `W`, `MHz`). */
function inferFields(cells: readonly string[]): string[] | undefined {
  const counters: Record<string, number> = {};
  const pick = (kind: string, names: readonly string[]): string => {
    const n = counters[kind] ?? 0;
    counters[kind] = n + 1;
    return names[Math.min(n, names.length - 1)]!;
  };
  const hasUnits = cells.some((c) => /\s(%|MiB|W|MHz)$/.test(c));
  if (!hasUnits)
    return cells.length === DIGEST_QUERY_FIELDS.length && cells.every((c) => parseNumber(c) !== undefined)
      ? [...DIGEST_QUERY_FIELDS]
      : undefined;
  return cells.map((c) => {
    if (/\s%$/.test(c)) return pick('%', ['utilization.gpu', 'utilization.memory', 'unknown']);
    if (/\sMiB$/.test(c)) return pick('MiB', ['memory.total', 'memory.used', 'memory.free']);
    if (/\sW$/.test(c)) return pick('W', ['power.draw', 'power.limit']);
    if (/\sMHz$/.test(c)) return pick('MHz', ['clocks.sm', 'clocks.mem']);
    if (NAME_RE.test(c)) return 'name';
    if (/^GPU-[0-9a-f-]+$/i.test(c)) return 'uuid';
    if (/^\d+$/.test(c) && (counters['idx'] ?? 0) === 0) {
      counters['idx'] = 1;
      return 'index';
    }
    return 'unknown';
  });
}

/**
 * Parses `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`: one sample per data row.
 * Field names come from the header, else from `fields` (e.g. the `--query-gpu=` list of the command
 * in a capture), else are inferred from units. Pure; returns [] when nothing can be interpreted.
 */
export function parseQueryGpuCsv(text: string, fields?: readonly string[], source = 'query-gpu csv'): GpuSample[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('#'));
  if (lines.length === 0) return [];
  let header: string[] | undefined;
  let rows = lines.map(splitCsvLine);
  if (isHeader(rows[0]!)) {
    header = rows[0]!.map((h) =>
      h
        .replace(/\s*\[[^\]]*\]$/, '')
        .trim()
        .toLowerCase(),
    );
    rows = rows.slice(1);
  } else if (fields) header = fields.map((f) => f.toLowerCase());
  const out: GpuSample[] = [];
  for (const cells of rows) {
    const names = header ?? inferFields(cells);
    if (!names || names.length !== cells.length) continue;
    const v = new Map<string, string>();
    names.forEach((n, i) => v.set(n, cells[i]!));
    const get = (...keys: string[]): string | undefined => {
      for (const k of keys) {
        const x = v.get(k);
        if (
          x !== undefined &&
          !/^\[?(N\/A|Not Supported|Unknown Error|Requested functionality has been deprecated)\]?$/i.test(x)
        )
          return x;
      }
      return undefined;
    };
    const reasons: string[] = [];
    for (const [k, x] of v) {
      const m = /^clocks_(?:event|throttle)_reasons\.([a-z_]+)$/.exec(k);
      if (m && m[1] !== 'supported' && m[1] !== 'active' && m[1] !== 'gpu_idle' && x === 'Active') reasons.push(m[1]!);
    }
    const hasReasonFields = [...v.keys()].some(
      (k) => /^clocks_(event|throttle)_reasons\.[a-z_]+$/.test(k) && !/\.(supported|active)$/.test(k),
    );
    const single = parseNumber(get('retired_pages.single_bit_ecc.count', 'retired_pages.sbe'));
    const double = parseNumber(get('retired_pages.double_bit.count', 'retired_pages.dbe'));
    out.push(
      compact({
        source,
        timestamp: get('timestamp'),
        index: parseNumber(get('index')),
        uuid: get('uuid'),
        name: get('name', 'gpu_name'),
        bus_id: get('pci.bus_id', 'gpu_bus_id'),
        utilization_gpu_pct: parseNumber(get('utilization.gpu')),
        utilization_memory_pct: parseNumber(get('utilization.memory')),
        memory_used_bytes: parseBytes(get('memory.used')),
        memory_total_bytes: parseBytes(get('memory.total')),
        power_draw_w: parseNumber(get('power.draw', 'power.draw.average', 'power.draw.instant')),
        power_limit_w: parseNumber(get('enforced.power.limit', 'power.limit')),
        temperature_gpu_c: parseNumber(get('temperature.gpu')),
        clocks_sm_mhz: parseNumber(get('clocks.current.sm', 'clocks.sm')),
        clocks_max_sm_mhz: parseNumber(get('clocks.max.sm', 'clocks.max.graphics')),
        clocks_mem_mhz: parseNumber(get('clocks.current.memory', 'clocks.mem')),
        pstate: get('pstate'),
        persistence_mode: parseFlag(get('persistence_mode')),
        throttle_reasons: hasReasonFields ? reasons : undefined,
        ecc_uncorrected_volatile: parseNumber(get('ecc.errors.uncorrected.volatile.total')),
        retired_pages: single === undefined && double === undefined ? undefined : (single ?? 0) + (double ?? 0),
        mig_enabled: parseFlag(get('mig.mode.current')),
        pcie_gen_current: parseNumber(get('pcie.link.gen.current', 'pcie.link.gen.gpucurrent')),
        pcie_gen_max: parseNumber(get('pcie.link.gen.max', 'pcie.link.gen.gpumax')),
        pcie_width_current: parseNumber(get('pcie.link.width.current')),
        pcie_width_max: parseNumber(get('pcie.link.width.max')),
      }),
    );
  }
  return out;
}
