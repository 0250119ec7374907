/**
 * What a Slurm launch derives from the request and the server: tasks per node, the inherited
 * environment, the replicas it reports.
 */
import { GoodputError } from '../../core/errors.js';
import { join } from 'node:path';
import type { BackendNode, LaunchedReplica, LaunchRequest } from '../backend.js';
import { replicaLogName } from '../run-files.js';
import type { NodeShare } from './batch-script.js';

/**
 * Tasks per node in rank order: nodes in the order they first appear in the request, so ranks
 * are contiguous per node (as torchrun numbers them) and rank 0 sits on the first node.
 */
export function sharesOf(req: LaunchRequest, inventory: readonly BackendNode[]): NodeShare[] {
  const shares: NodeShare[] = [];
  for (const n of req.nodes) {
    const node = inventory[n];
    if (!node)
      throw new GoodputError('E_LAUNCH', `node index ${n} is not in the inventory (${inventory.length} nodes)`);
    const s = shares.find((x) => x.node === node.name);
    if (s) s.count += 1;
    else shares.push({ node: node.name, count: 1 });
  }
  if (shares.length === 0) throw new GoodputError('E_LAUNCH', 'a launch needs at least one replica');
  return shares;
}

/** The server's environment minus what the contract sets and what Slurm sets inside a job. */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v === undefined ||
      k.startsWith('GOODPUT_') ||
      k === 'CUDA_VISIBLE_DEVICES' ||
      (k.startsWith('SLURM_') && k !== 'SLURM_CONF')
    )
      continue;
    env[k] = v;
  }
  return env;
}

/** The replicas of Slurm job `launch_id` in rank order (ranks contiguous per node, as `shares` orders them). */
export function launchedReplicas(
  req: LaunchRequest,
  shares: readonly NodeShare[],
  inventory: readonly BackendNode[],
  launch_id: string,
  logs_dir: string,
): LaunchedReplica[] {
  const started_at_ms = Date.now();
  let rank = 0;
  return shares.flatMap((s) =>
    req.devices
      .filter((_, i) => inventory[req.nodes[i]!]?.name === s.node)
      .map((device) => ({
        rank: rank++,
        device,
        node: s.node,
        launch_id,
        pid: 0,
        proc_start: '',
        log_path: join(logs_dir, replicaLogName(rank - 1)),
        started_at_ms,
      })),
  );
}
