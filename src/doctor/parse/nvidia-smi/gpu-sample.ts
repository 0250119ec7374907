/**
 * One reading of one GPU from any nvidia-smi output. Every metric is optional: each output kind
 * and driver version reports a different subset, and "N/A" becomes undefined, never 0.
 */
export interface GpuSample {
  /** Where it came from, e.g. "query-gpu csv", "-q -x", "dmon". */
  readonly source: string;
  /** Capture state label ("idle", "load") when the input was a sectioned capture. */
  state?: string;
  index?: number;
  uuid?: string;
  name?: string;
  bus_id?: string;
  timestamp?: string;
  utilization_gpu_pct?: number;
  utilization_memory_pct?: number;
  memory_used_bytes?: number;
  memory_total_bytes?: number;
  power_draw_w?: number;
  power_limit_w?: number;
  temperature_gpu_c?: number;
  clocks_sm_mhz?: number;
  clocks_max_sm_mhz?: number;
  clocks_mem_mhz?: number;
  pstate?: string;
  persistence_mode?: boolean;
  /** Active clock event (throttle) reasons other than idle, e.g. "sw_power_cap", "hw_thermal_slowdown". */
  throttle_reasons?: string[];
  ecc_uncorrected_volatile?: number;
  retired_pages?: number;
  mig_enabled?: boolean;
  mig_devices?: number;
  pcie_gen_current?: number;
  pcie_gen_max?: number;
  pcie_width_current?: number;
  pcie_width_max?: number;
}

const UNIT_BYTES: Readonly<Record<string, number>> = {
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
};

/** Parses "81920 MiB", "[N/A]", "N/A", "[Not Supported]"; returns the leading number or undefined. */
export function parseNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^\s*(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)/i.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Parses a memory quantity with its unit (MiB when none is given, as nvidia-smi reports). */
export function parseBytes(text: string | undefined, defaultUnit = 'mib'): number | undefined {
  if (text === undefined) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\b/i.exec(text);
  if (!m) return undefined;
  const unit = (m[2] ?? defaultUnit).toLowerCase();
  return Math.round(Number(m[1]) * (UNIT_BYTES[unit] ?? UNIT_BYTES[defaultUnit]!));
}

/** "Enabled"/"Yes"/"On" → true, "Disabled"/"No"/"Off" → false, else undefined. */
export function parseFlag(text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  const t = text.trim().toLowerCase();
  if (t === 'enabled' || t === 'yes' || t === 'on' || t === 'active') return true;
  if (t === 'disabled' || t === 'no' || t === 'off' || t === 'not active') return false;
  return undefined;
}

/** Drops keys whose value is undefined so samples print compactly. */
export function compact(s: GpuSample): GpuSample {
  for (const k of Object.keys(s) as (keyof GpuSample)[]) if (s[k] === undefined) delete s[k];
  return s;
}
