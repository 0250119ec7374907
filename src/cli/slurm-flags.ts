/**
 * The backend flags `goodput up` and `goodput profile` share: `--backend local|slurm` and the
 * Slurm settings (`--partition`, `--account`, `--qos`), checked the same way for both.
 */
import type { SlurmSettings } from '../backends/slurm/compose.js';
import { usageError } from '../core/errors.js';

/** parseArgs options of the backend flags. */
export const BACKEND_FLAGS = {
  backend: { type: 'string' },
  partition: { type: 'string' },
  account: { type: 'string' },
  qos: { type: 'string' },
} as const;

/**
 * The Slurm settings of `--backend slurm`, undefined for the local backend (the default).
 * Usage errors (naming `command`) for another backend, and for Slurm flags without
 * `--backend slurm`.
 */
export function slurmFlags(
  command: string,
  values: { backend?: string; partition?: string; account?: string; qos?: string },
): SlurmSettings | undefined {
  const backend = values.backend ?? 'local';
  if (backend !== 'local' && backend !== 'slurm') {
    throw usageError(`${command}: --backend must be 'local' or 'slurm', got '${backend}'`);
  }
  const given = (['partition', 'account', 'qos'] as const).filter((k) => values[k] !== undefined);
  if (backend === 'local') {
    if (given.length > 0) throw usageError(`${command}: --${given[0]} needs --backend slurm`);
    return undefined;
  }
  return Object.fromEntries(given.map((k) => [k, values[k]!])) as SlurmSettings;
}
