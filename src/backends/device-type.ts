/** The GPU type of a device, as every part of the control plane names it. Pure. */
import type { DeviceInfo } from './backend.js';

/**
 * The GPU type of a device: a GPU's model name as its backend reports it (nvidia-smi's name on
 * the local backend, e.g. `NVIDIA H100 80GB HBM3`; the GRES type on Slurm, e.g. `a100`), `gpu`
 * for a GPU without a name, `cpu` for CPU slots (and for no device). Profiles are kept per
 * (profile key, this type).
 */
export function deviceType(device: DeviceInfo | undefined): string {
  if (!device || device.kind === 'cpu') return 'cpu';
  return device.name.trim() || 'gpu';
}
