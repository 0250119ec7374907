/** Which active jobs sit on nodes that can no longer hold them (pure). */
import type { BackendNode } from '../../backends/backend.js';
import type { JobRecord } from '../../store/types.js';
import { holdsDevices } from './snapshot.js';

/** A job with replicas on a node that is drained, down or taken by other work. */
export interface NodeProblem {
  job_id: string;
  /** Stable per job, node, attempt and problem, so the controller records it once. */
  key: string;
  reason: string;
}

/**
 * Jobs that hold more devices on a node than Goodput may use there now (a drained or down
 * node, or devices taken by work Goodput did not launch). The next round's decision moves them;
 * these say why.
 */
export function nodeProblems(jobs: readonly JobRecord[], nodes: readonly BackendNode[]): NodeProblem[] {
  const out: NodeProblem[] = [];
  for (const job of jobs) {
    if (!holdsDevices(job)) continue;
    for (const n of new Set(job.allocation)) {
      const node = nodes[n];
      if (!node) continue;
      const held = job.allocation.filter((x) => x === n).length;
      if (held <= node.usable) continue;
      out.push({
        job_id: job.id,
        key: `node/${node.name}/${job.launches}/${node.note}`,
        reason:
          `node ${node.name} ${node.note || 'is unavailable'}: ${held} replica(s) there, ` +
          `${node.usable} device(s) usable; moving the job (checkpoint-restart)`,
      });
    }
  }
  return out;
}
