/** How two devices are connected, from the `nvidia-smi topo -m` legend, fastest first. */
export type LinkKind = 'NVLINK' | 'PIX' | 'PXB' | 'PHB' | 'NODE' | 'SYS';

/** One pair of devices (GPU-GPU or GPU-NIC). */
export interface TopoLink {
  readonly a: string;
  readonly b: string;
  readonly kind: LinkKind;
  /** Number of bonded NVLinks when kind is NVLINK. */
  readonly nvlinks?: number;
}

/** A GPU row of the matrix with its host affinity (for CPU/NUMA binding advice). */
export interface TopoGpu {
  readonly name: string;
  readonly cpu_affinity?: string;
  readonly numa_affinity?: string;
}

/** Parsed `nvidia-smi topo -m`. */
export interface Topology {
  readonly gpus: TopoGpu[];
  readonly nics: string[];
  readonly links: TopoLink[];
}

/** Plain-language meaning of each connection kind, for reports. */
export const LINK_MEANING: Readonly<Record<LinkKind, string>> = {
  NVLINK: 'NVLink',
  PIX: 'a single PCIe switch',
  PXB: 'multiple PCIe switches',
  PHB: 'a PCIe host bridge (the CPU)',
  NODE: 'PCIe host bridges within one NUMA node',
  SYS: 'the inter-socket link (QPI/UPI) between NUMA nodes',
};

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const MULTIWORD = [
  ['CPU Affinity', 'CPU_Affinity'],
  ['NUMA Affinity', 'NUMA_Affinity'],
  ['GPU NUMA ID', 'GPU_NUMA_ID'],
] as const;

function parseCell(cell: string): { kind: LinkKind; nvlinks?: number } | undefined {
  const c = cell.trim().toUpperCase();
  const nv = /^NV(\d+)$/.exec(c);
  if (nv) return { kind: 'NVLINK', nvlinks: Number(nv[1]) };
  if (c === 'PIX' || c === 'PXB' || c === 'PHB' || c === 'NODE' || c === 'SYS') return { kind: c };
  if (c === 'SOC') return { kind: 'SYS' };
  return undefined;
}

/**
 * Parses the connection matrix; tolerant of tabs or spaces, ANSI escapes, NIC rows/columns and the
 * trailing legend. Pure; returns undefined when no matrix header is found.
 */
export function parseTopoMatrix(text: string): Topology | undefined {
  const lines = text.replace(ANSI, '').split(/\r?\n/);
  const hi = lines.findIndex((l) => {
    const t = l.trim().split(/\s+/);
    return t[0] === 'GPU0' && t[1] !== undefined && t[1] !== 'X';
  });
  if (hi < 0) return undefined;
  let headerLine = lines[hi]!;
  for (const [from, to] of MULTIWORD) headerLine = headerLine.replace(from, to);
  const header = headerLine.trim().split(/\s+/);
  const gpus: TopoGpu[] = [];
  const nics: string[] = header.filter((h) => !/^GPU\d+$/.test(h) && !/_(Affinity|ID)$/.test(h));
  const links: TopoLink[] = [];
  const seen = new Set<string>();
  for (let i = hi + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*Legend/i.test(line)) break;
    const cells = line.trim().split(/\s+/);
    const rowName = cells[0];
    if (!rowName || cells.length < 2) continue;
    const values = cells.slice(1);
    if (/^GPU\d+$/.test(rowName)) {
      const affinityAt = header.indexOf('CPU_Affinity');
      const numaAt = header.indexOf('NUMA_Affinity');
      gpus.push({
        name: rowName,
        cpu_affinity: affinityAt >= 0 ? values[affinityAt] : undefined,
        numa_affinity: numaAt >= 0 ? values[numaAt] : undefined,
      });
    }
    header.forEach((col, j) => {
      if (col === rowName || /_(Affinity|ID)$/.test(col)) return;
      const parsed = parseCell(values[j] ?? '');
      if (!parsed) return;
      const [a, b] = [rowName, col].sort();
      const id = `${a}|${b}`;
      if (seen.has(id)) return;
      seen.add(id);
      links.push({ a: a!, b: b!, ...parsed });
    });
  }
  return { gpus, nics, links };
}
