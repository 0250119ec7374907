import type { XmlElement } from '../xml-reader.js';
import { child, firstTextAt, parseXml, textAt } from '../xml-reader.js';
import type { GpuSample } from './gpu-sample.js';
import { compact, parseBytes, parseFlag, parseNumber } from './gpu-sample.js';

/** Parsed `nvidia-smi -q -x` document. */
export interface NvidiaSmiXml {
  readonly driver_version?: string;
  readonly cuda_version?: string;
  readonly timestamp?: string;
  readonly gpus: GpuSample[];
}

function activeReasons(el: XmlElement | undefined): string[] | undefined {
  if (!el) return undefined;
  const out: string[] = [];
  for (const c of el.children) {
    if (c.text.trim() !== 'Active') continue;
    const reason = c.name.replace(/^clocks_(event|throttle)_reason_/, '');
    if (reason !== 'gpu_idle') out.push(reason);
  }
  return out;
}

function sumCounts(el: XmlElement | undefined, pattern: RegExp): number | undefined {
  if (!el) return undefined;
  let total: number | undefined;
  const visit = (e: XmlElement): void => {
    if (e.children.length === 0 && pattern.test(e.name)) {
      const n = parseNumber(e.text);
      if (n !== undefined) total = (total ?? 0) + n;
    }
    e.children.forEach(visit);
  };
  visit(el);
  return total;
}

/**
 * Extracts one sample per `<gpu>` from `nvidia-smi -q -x` output (DTD v10 to v13: power under
 * `power_readings` or `gpu_power_readings`, clock reasons under `clocks_throttle_reasons` or
 * `clocks_event_reasons`). Pure; throws SyntaxError on malformed XML.
 */
export function parseNvidiaSmiXml(text: string, source = '-q -x'): NvidiaSmiXml {
  const doc = parseXml(text);
  const log = child(doc, 'nvidia_smi_log');
  if (!log) throw new SyntaxError('no <nvidia_smi_log> root');
  const gpus = log.children
    .filter((c) => c.name === 'gpu')
    .map((g, i) => {
      const memTotal = parseBytes(textAt(g, 'fb_memory_usage/total'));
      const retiredSingle = parseNumber(textAt(g, 'retired_pages/multiple_single_bit_retirement/retired_count'));
      const retiredDouble = parseNumber(textAt(g, 'retired_pages/double_bit_retirement/retired_count'));
      const migDevices = child(g, 'mig_devices')?.children.filter((c) => c.name === 'mig_device').length;
      return compact({
        source,
        index: parseNumber(textAt(g, 'minor_number')) ?? i,
        uuid: textAt(g, 'uuid'),
        name: textAt(g, 'product_name'),
        bus_id: g.attrs['id'],
        utilization_gpu_pct: parseNumber(textAt(g, 'utilization/gpu_util')),
        utilization_memory_pct: parseNumber(textAt(g, 'utilization/memory_util')),
        memory_used_bytes: parseBytes(textAt(g, 'fb_memory_usage/used')),
        memory_total_bytes: memTotal,
        power_draw_w: parseNumber(
          firstTextAt(g, [
            'gpu_power_readings/power_draw',
            'power_readings/power_draw',
            'gpu_power_readings/instant_power_draw',
          ]),
        ),
        power_limit_w: parseNumber(
          firstTextAt(g, [
            'gpu_power_readings/current_power_limit',
            'power_readings/enforced_power_limit',
            'power_readings/power_limit',
            'gpu_power_readings/enforced_power_limit',
          ]),
        ),
        temperature_gpu_c: parseNumber(textAt(g, 'temperature/gpu_temp')),
        clocks_sm_mhz: parseNumber(textAt(g, 'clocks/sm_clock')),
        clocks_max_sm_mhz: parseNumber(textAt(g, 'max_clocks/sm_clock')),
        clocks_mem_mhz: parseNumber(textAt(g, 'clocks/mem_clock')),
        pstate: textAt(g, 'performance_state'),
        persistence_mode: parseFlag(textAt(g, 'persistence_mode')),
        throttle_reasons: activeReasons(child(g, 'clocks_event_reasons') ?? child(g, 'clocks_throttle_reasons')),
        ecc_uncorrected_volatile:
          sumCounts(child(g, 'ecc_errors/volatile'), /uncorrectable/) ??
          parseNumber(textAt(g, 'ecc_errors/volatile/double_bit/total')),
        retired_pages:
          retiredSingle === undefined && retiredDouble === undefined
            ? undefined
            : (retiredSingle ?? 0) + (retiredDouble ?? 0),
        mig_enabled: parseFlag(textAt(g, 'mig_mode/current_mig')),
        mig_devices: migDevices,
        pcie_gen_current: parseNumber(textAt(g, 'pci/pci_gpu_link_info/pcie_gen/current_link_gen')),
        pcie_gen_max: parseNumber(textAt(g, 'pci/pci_gpu_link_info/pcie_gen/max_link_gen')),
        pcie_width_current: parseNumber(textAt(g, 'pci/pci_gpu_link_info/link_widths/current_link_width')),
        pcie_width_max: parseNumber(textAt(g, 'pci/pci_gpu_link_info/link_widths/max_link_width')),
      });
    });
  return {
    driver_version: textAt(log, 'driver_version'),
    cuda_version: textAt(log, 'cuda_version'),
    timestamp: textAt(log, 'timestamp'),
    gpus,
  };
}
