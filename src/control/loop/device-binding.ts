/** Turning a policy's allocations (node index per replica) into concrete device indices. */
import type { NodeInfo } from '../../core/cluster.js';
import { validateDecision } from '../../policy/validate-decision.js';
import type { JobRecord } from '../../store/types.js';
import { holdsDevices } from './snapshot.js';

/** Whether two allocations are the same list. */
export function sameAllocation(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Result of `assignDevices`: devices per job with a non-empty allocation, or why not. */
export type DeviceAssignment = { ok: true; devices: Map<string, number[]> } | { ok: false; reason: string };

/**
 * Assigns a device index on its node to every replica (`nodeDevices[n]`: the usable device
 * indices of node n) so that jobs keep the devices they hold on a node as far as their new
 * replica count there allows, and growing jobs take free devices in index order. Never gives a
 * device to two jobs; refuses a decision that fails validateDecision (a job not in `jobs`, an
 * unknown node, over-commit of a node's usable devices, a job on nodes of two `types`). Pure.
 */
export function assignDevices(
  jobs: readonly JobRecord[],
  allocations: Record<string, readonly number[]>,
  nodeDevices: readonly (readonly number[])[],
  types?: readonly Pick<NodeInfo, 'gpu_type'>[],
): DeviceAssignment {
  const check = validateDecision(
    {
      nodes: nodeDevices.map((d, i) => ({
        gpus: d.length,
        ...(types?.[i]?.gpu_type !== undefined ? { gpu_type: types[i]!.gpu_type } : {}),
      })),
      jobs,
    },
    allocations,
  );
  if (!check.ok) return check;
  const taken = nodeDevices.map(() => new Set<number>());
  // Per job and node: the devices it keeps (first pass) and then gets (second pass).
  const lists = new Map<string, Map<number, number[]>>();
  for (const job of jobs) {
    const allocation = allocations[job.id] ?? [];
    if (allocation.length === 0) continue;
    const perNode = new Map<number, number[]>();
    lists.set(job.id, perNode);
    for (const n of new Set(allocation)) {
      const need = allocation.filter((x) => x === n).length;
      const valid = new Set(nodeDevices[n]);
      const held = holdsDevices(job)
        ? job.devices.filter((d, i) => job.allocation[i] === n && valid.has(d) && !taken[n]!.has(d))
        : [];
      const keep = held.slice(0, need);
      for (const d of keep) taken[n]!.add(d);
      perNode.set(n, keep);
    }
  }
  const out = new Map<string, number[]>();
  for (const [id, perNode] of lists) {
    for (const [n, list] of perNode) {
      const need = allocations[id]!.filter((x) => x === n).length;
      for (const d of nodeDevices[n]!) {
        if (list.length >= need) break;
        if (!taken[n]!.has(d)) {
          taken[n]!.add(d);
          list.push(d);
        }
      }
    }
    const next = new Map([...perNode].map(([n, list]) => [n, [...list]]));
    out.set(
      id,
      allocations[id]!.map((n) => next.get(n)!.shift()!),
    );
  }
  return { ok: true, devices: out };
}
