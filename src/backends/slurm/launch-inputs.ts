/** What a Slurm launch derives from the request and the server: tasks per node, the inherited environment. */
import { GoodputError } from '../../core/errors.js';
import type { BackendNode, LaunchRequest } from '../backend.js';
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
