/** Device discovery for the local backend: nvidia-smi GPUs, or CPU slots. */
import { execFileSync } from 'node:child_process';
import { GoodputError } from '../../core/errors.js';
import type { DeviceInfo } from '../backend.js';

/**
 * Parses `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits`.
 * Pure; skips blank lines, throws E_DEVICES on a malformed line.
 */
export function parseNvidiaSmi(text: string): DeviceInfo[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((line) => {
      const [index, uuid, name, memory] = line.split(',').map((f) => f.trim());
      const i = Number(index);
      if (!Number.isInteger(i) || !uuid || !name)
        throw new GoodputError('E_DEVICES', `unexpected nvidia-smi line: '${line}'`);
      const mib = Number(memory);
      return { index: i, kind: 'gpu' as const, uuid, name, ...(Number.isFinite(mib) ? { memory_mib: mib } : {}) };
    });
}

/** N CPU slots, indices 0..N-1. */
export function cpuSlots(count: number): DeviceInfo[] {
  return Array.from({ length: count }, (_, index) => ({ index, kind: 'cpu' as const, name: `cpu-slot-${index}` }));
}

/** Runs nvidia-smi; [] when it is not installed or fails. */
export function queryGpus(): DeviceInfo[] {
  try {
    const out = execFileSync(
      'nvidia-smi',
      ['--query-gpu=index,uuid,name,memory.total', '--format=csv,noheader,nounits'],
      {
        encoding: 'utf8',
        timeout: 15_000,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    return parseNvidiaSmi(out);
  } catch {
    return [];
  }
}

/** `--gpus` value: all GPUs, the first N, or an explicit index list. */
export type GpuSelection = 'auto' | number | readonly number[];

/** Parses the `--gpus` flag (`auto`, `N` or `0,1,...`). */
export function parseGpuSelection(value: string): GpuSelection {
  if (value === 'auto') return 'auto';
  if (/^\d+$/.test(value)) {
    // A count of none would leave the server or the sweep without a device, waiting for ever.
    if (Number(value) === 0)
      throw new GoodputError(
        'E_USAGE',
        `--gpus 0 selects no GPU (a single number is a count); for GPU 0 alone write --gpus 0, (a list of one index)`,
        2,
      );
    return Number(value);
  }
  // A list; a trailing comma makes one index a list (--gpus 3, is GPU 3, --gpus 3 the first three).
  if (/^\d+(,\d+)*,?$/.test(value)) return value.replace(/,$/, '').split(',').map(Number);
  throw new GoodputError(
    'E_USAGE',
    `--gpus must be 'auto', a count or a list of indices like 0,1,3 (one index: 3,); got '${value}'`,
    2,
  );
}

/**
 * The devices to use: `cpu_slots` CPU slots when given, else the selected GPUs. `warn` receives
 * a message when no GPU was found and one CPU slot is used instead.
 */
export function resolveDevices(
  selection: GpuSelection,
  cpu_slots: number | undefined,
  warn: (message: string) => void,
  gpus: () => DeviceInfo[] = queryGpus,
): DeviceInfo[] {
  if (cpu_slots !== undefined) return cpuSlots(cpu_slots);
  const found = gpus();
  if (selection === 'auto') {
    if (found.length > 0) return found;
    warn('no GPU found (nvidia-smi missing or failing); using 1 CPU slot. Pass --cpu-slots N to choose.');
    return cpuSlots(1);
  }
  if (typeof selection === 'number') {
    if (selection > found.length)
      throw new GoodputError('E_DEVICES', `--gpus ${selection}: only ${found.length} GPU(s) found`);
    return found.slice(0, selection);
  }
  return selection.map((i) => {
    const gpu = found.find((g) => g.index === i);
    if (!gpu)
      throw new GoodputError(
        'E_DEVICES',
        `--gpus: no GPU with index ${i} (found: ${found.map((g) => g.index).join(',') || 'none'})`,
      );
    return gpu;
  });
}
