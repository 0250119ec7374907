/**
 * `goodput profile --backend slurm`: the Slurm backend as `goodput up --backend slurm` builds it
 * (backends/slurm/compose.ts: the inventory read, --partition checked, the job directory's file
 * system checked to be shared with the nodes), the node and GPUs the sweep runs on, and the
 * address the compute nodes report to.
 */
import type { Backend, BackendNode, DeviceInfo } from '../../backends/backend.js';
import { slurmBackend, type SlurmSettings } from '../../backends/slurm/compose.js';
import { GoodputError } from '../../core/errors.js';
import { reportedHost } from '../../datadir/replica-url.js';
import { devicesOfOneType } from './one-type.js';

/** Where a Slurm profile runs. */
export interface SlurmTarget {
  backend: Backend;
  /** Position of the chosen node in `backend.nodes()`. */
  node: number;
  /** GPUs of that node, of one type, at most as many as Slurm lets Goodput use there now. */
  devices: DeviceInfo[];
  /** The report endpoint's listen address and the host the replicas are given. */
  listen: { host: string; reported_host: string };
}

/**
 * The Slurm backend over `settings` (its job names hashed from `work_dir`, which must be on a file
 * system the nodes share) and the node with the most GPUs usable now, at most `max_gpus` of them:
 * the sweep runs on one node, as on the local backend (cross-node synchronization is the
 * planner's estimate). The report endpoint listens on `host` (default every interface, replicas
 * given this machine's host name, as `goodput up --host 0.0.0.0 --backend slurm`). Throws
 * E_BACKEND_UNAVAILABLE when Slurm does not answer, E_SLURM_PARTITION for a partition without
 * GPU nodes, E_SHARED_FS for a work directory the nodes do not see, E_DEVICES when no node has
 * a usable GPU now (naming why, per node).
 */
export async function slurmTarget(
  settings: SlurmSettings,
  work_dir: string,
  max_gpus: number | undefined,
  host: string | undefined,
  log: (line: string) => void,
): Promise<SlurmTarget> {
  const backend = await slurmBackend(settings, work_dir, log);
  try {
    const nodes = backend.nodes();
    const choices = nodes
      .map((n, i) => ({ node: i, devices: usableDevices(n, max_gpus) }))
      .filter((c) => c.devices.length > 0);
    if (choices.length === 0) {
      const why = nodes.map((n) => `${n.name}: ${n.note || `${n.usable}/${n.devices.length} usable`}`).join('; ');
      const where = settings.partition !== undefined ? `partition '${settings.partition}'` : 'the cluster';
      throw new GoodputError(
        'E_DEVICES',
        `no node of ${where} has a GPU Goodput may use now (${why}); ` +
          'try again when one is free (sinfo, squeue), or pass another --partition',
      );
    }
    const best = choices.reduce((a, b) => (b.devices.length > a.devices.length ? b : a));
    const chosen = nodes[best.node]!;
    const note = (line: string): void => log(`slurm: ${line.replace('this machine', `node ${chosen.name}`)}`);
    const devices = devicesOfOneType(best.devices, false, note);
    const listen_host = host ?? '0.0.0.0';
    const listen = { host: listen_host, reported_host: reportedHost(listen_host, true) };
    if (/^(127\.|localhost$|::1$)/.test(listen.reported_host)) {
      log(
        `warning: replicas on other nodes cannot report to ${listen.reported_host}; ` +
          'leave --host out, or pass an address the compute nodes reach',
      );
    }
    log(
      `slurm: profiling on node ${chosen.name} (${devices.length} of its ${chosen.devices.length} GPU(s)); ` +
        `replicas report to ${listen.reported_host}`,
    );
    return { backend, node: best.node, devices, listen };
  } catch (error) {
    backend.close();
    throw error;
  }
}

/**
 * The devices of `node` a profile may take: as many as Slurm lets Goodput use there now (a
 * count: Slurm, not Goodput, picks which GPUs of the node a job gets), at most `max_gpus`.
 */
function usableDevices(node: BackendNode, max_gpus: number | undefined): DeviceInfo[] {
  return node.devices.slice(0, Math.min(node.usable, max_gpus ?? Infinity));
}
