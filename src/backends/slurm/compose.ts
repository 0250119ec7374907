/** Building the Slurm backend for a server: settings from the command line, the start-up checks. */
import { createHash } from 'node:crypto';
import { GoodputError } from '../../core/errors.js';
import { SlurmBackend } from './slurm-backend.js';
import { checkSharedDir } from './shared-dir.js';

/** What `goodput up --backend slurm` passes. */
export interface SlurmSettings {
  partition?: string;
  account?: string;
  qos?: string;
}

/**
 * A Slurm backend whose job names are `goodput-<hash of data_dir>-<job>-<attempt>` (so two servers
 * on one cluster tell their jobs apart), after reading the inventory and checking that `data_dir`
 * is shared with every usable node (throws E_SHARED_FS when not; logs when it cannot tell).
 */
export async function slurmBackend(
  s: SlurmSettings,
  data_dir: string,
  log: (line: string) => void,
): Promise<SlurmBackend> {
  const name_prefix = `goodput-${createHash('sha256').update(data_dir).digest('hex').slice(0, 6)}`;
  const backend = new SlurmBackend({ ...s, name_prefix, log });
  try {
    await backend.refresh();
    if (backend.nodes().length === 0) throw noGpuNodes(s.partition, backend.partitions());
    const nodes = backend
      .nodes()
      .filter((n) => n.usable > 0)
      .map((n) => n.name);
    const check = await checkSharedDir({ ...s, dir: data_dir, nodes });
    log(
      check.verified
        ? `slurm: ${data_dir} is readable on node(s) ${nodes.join(',')}`
        : `slurm: could not verify that ${data_dir} is shared with the nodes (${check.reason})`,
    );
  } catch (error) {
    backend.close();
    throw error;
  }
  return backend;
}

/** Why a Slurm cluster offers Goodput no GPU node (E_SLURM_PARTITION): a wrong --partition, or no GPU gres at all. */
function noGpuNodes(partition: string | undefined, partitions: readonly string[]): GoodputError {
  const known = partitions.length > 0 ? partitions.join(', ') : 'none';
  if (partition !== undefined && !partitions.includes(partition)) {
    return new GoodputError(
      'E_SLURM_PARTITION',
      `Slurm has no partition '${partition}' (its partitions: ${known}); pass one of them with --partition`,
    );
  }
  const where = partition !== undefined ? `partition '${partition}' has` : 'Slurm lists';
  return new GoodputError(
    'E_SLURM_PARTITION',
    `${where} no node with GPUs (gres gpu); pass the partition of the GPU nodes with --partition (partitions: ${known})`,
  );
}
