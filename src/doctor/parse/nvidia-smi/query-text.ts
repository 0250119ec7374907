import type { XmlElement } from '../xml-reader.js';
import { child, firstTextAt, textAt } from '../xml-reader.js';
import type { GpuSample } from './gpu-sample.js';
import { compact, parseBytes, parseFlag, parseNumber } from './gpu-sample.js';

/** Parsed `nvidia-smi -q` (text) output. */
export interface NvidiaSmiQuery {
  readonly driver_version?: string;
  readonly cuda_version?: string;
  readonly gpus: GpuSample[];
}

const key = (s: string): string =>
  s
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

/**
 * Turns the indented `Key : Value` layout into a tree (reusing the XML element shape so lookups are
 * shared). Section lines without a colon open a child; deeper indentation nests. Pure.
 */
function toTree(lines: readonly string[]): XmlElement {
  const root: XmlElement = { name: '#root', attrs: {}, children: [], text: '' };
  const stack: { indent: number; el: XmlElement }[] = [{ indent: -1, el: root }];
  for (const raw of lines) {
    if (raw.trim() === '') continue;
    const indent = raw.length - raw.trimStart().length;
    while (stack.length > 1 && stack[stack.length - 1]!.indent >= indent) stack.pop();
    const parent = stack[stack.length - 1]!.el;
    const colon = raw.indexOf(' : ');
    const name = key(colon >= 0 ? raw.slice(0, colon) : raw.endsWith(':') ? raw.slice(0, -1) : raw);
    const el: XmlElement = { name, attrs: {}, children: [], text: colon >= 0 ? raw.slice(colon + 3).trim() : '' };
    parent.children.push(el);
    stack.push({ indent, el });
  }
  return root;
}

function activeReasons(el: XmlElement | undefined): string[] | undefined {
  if (!el) return undefined;
  const out: string[] = [];
  const visit = (e: XmlElement): void => {
    if (e.text === 'Active' && e.name !== 'idle' && e.name !== 'gpu_idle') out.push(e.name);
    e.children.forEach(visit);
  };
  el.children.forEach(visit);
  return out;
}

/** Parses `nvidia-smi -q` text: one sample per `GPU <bus id>` block. Pure. */
export function parseNvidiaSmiQueryText(text: string, source = '-q'): NvidiaSmiQuery {
  const lines = text.split(/\r?\n/).filter((l) => !/^=+NVSMI LOG=+$/.test(l.trim()));
  const tree = toTree(lines);
  const gpus: GpuSample[] = [];
  for (const node of tree.children) {
    const m = /^gpu_([0-9a-f_]+)$/.exec(node.name);
    if (!m) continue;
    const busLine = lines.find((l) => l.startsWith('GPU ') && key(l) === node.name);
    const retiredSingle = parseNumber(textAt(node, 'retired_pages/single_bit_ecc'));
    const retiredDouble = parseNumber(textAt(node, 'retired_pages/double_bit_ecc'));
    let ecc: number | undefined;
    for (const c of child(node, 'ecc_errors/volatile')?.children ?? []) {
      if (/uncorrectable/.test(c.name)) {
        const n = parseNumber(c.text);
        if (n !== undefined) ecc = (ecc ?? 0) + n;
      }
    }
    gpus.push(
      compact({
        source,
        index: parseNumber(textAt(node, 'minor_number')) ?? gpus.length,
        uuid: textAt(node, 'gpu_uuid'),
        name: textAt(node, 'product_name'),
        bus_id: busLine?.slice(4).trim(),
        utilization_gpu_pct: parseNumber(textAt(node, 'utilization/gpu')),
        utilization_memory_pct: parseNumber(textAt(node, 'utilization/memory')),
        memory_used_bytes: parseBytes(textAt(node, 'fb_memory_usage/used')),
        memory_total_bytes: parseBytes(textAt(node, 'fb_memory_usage/total')),
        power_draw_w: parseNumber(
          firstTextAt(node, [
            'gpu_power_readings/average_power_draw',
            'gpu_power_readings/power_draw',
            'power_readings/power_draw',
            'gpu_power_readings/instantaneous_power_draw',
          ]),
        ),
        power_limit_w: parseNumber(
          firstTextAt(node, [
            'gpu_power_readings/current_power_limit',
            'power_readings/enforced_power_limit',
            'power_readings/power_limit',
          ]),
        ),
        temperature_gpu_c: parseNumber(firstTextAt(node, ['temperature/gpu_current_temp', 'temperature/gpu'])),
        clocks_sm_mhz: parseNumber(textAt(node, 'clocks/sm')),
        clocks_max_sm_mhz: parseNumber(textAt(node, 'max_clocks/sm')),
        clocks_mem_mhz: parseNumber(textAt(node, 'clocks/memory')),
        pstate: textAt(node, 'performance_state'),
        persistence_mode: parseFlag(textAt(node, 'persistence_mode')),
        throttle_reasons: activeReasons(child(node, 'clocks_event_reasons') ?? child(node, 'clocks_throttle_reasons')),
        ecc_uncorrected_volatile: ecc,
        retired_pages:
          retiredSingle === undefined && retiredDouble === undefined
            ? undefined
            : (retiredSingle ?? 0) + (retiredDouble ?? 0),
        mig_enabled: parseFlag(textAt(node, 'mig_mode/current')),
        pcie_gen_current: parseNumber(firstTextAt(node, ['pci/gpu_link_info/pcie_generation/current'])),
        pcie_gen_max: parseNumber(firstTextAt(node, ['pci/gpu_link_info/pcie_generation/max'])),
        pcie_width_current: parseNumber(firstTextAt(node, ['pci/gpu_link_info/link_width/current'])),
        pcie_width_max: parseNumber(firstTextAt(node, ['pci/gpu_link_info/link_width/max'])),
      }),
    );
  }
  return { driver_version: textAt(tree, 'driver_version'), cuda_version: textAt(tree, 'cuda_version'), gpus };
}
