/**
 * The backend's inventory as the policy sees it: one policy node per group of identical devices
 * on a machine (its GPU type, backends/device-type.ts), so that a machine with two kinds of GPU
 * is two nodes of two types, and a machine of one kind is one node, as before. Allocations are
 * translated both ways: stored ones name backend nodes (and devices), the policy's name groups.
 * Pure.
 */
import type { BackendNode } from '../../backends/backend.js';
import { deviceType } from '../../backends/device-type.js';
import { gpuTypeOf, type Allocation, type NodeInfo } from '../../core/cluster.js';

/** One group: the devices of one type on one backend node. */
export interface DeviceGroup {
  /** Position of its machine in the backend's inventory. */
  node: number;
  type: string;
  /** Device indices of the group Goodput may hold now (the machine's usable ones of this type). */
  usable: number[];
  /** Every device index of the group. */
  all: number[];
  /** How many of its devices are marked (slow or drained; `typedInventory`'s `marked`). */
  marked: number;
}

/** The policy's nodes (`nodes[i]` is `groups[i]`). */
export interface TypedInventory {
  nodes: NodeInfo[];
  groups: DeviceGroup[];
  /** By machine (DeviceGroup.node), the indices of its groups in `groups`, in order. */
  groupsOf: ReadonlyMap<number, readonly number[]>;
  /** Whether the nodes hold more than one GPU type (isMixed; counted once, asked per job). */
  mixed: boolean;
}

/** A device marked by the verdicts across ranks (control/ranks/device-health.ts), by machine name. */
export interface MarkedDevice {
  node: string;
  device: number;
}

/**
 * Groups each machine's devices by type in order of first appearance. Usable devices are the
 * first `usable` of the machine's list, as the rest of the control plane counts them. A machine
 * without devices is one empty group of type `cpu`.
 *
 * The policy's nodes come in the machines' order, except that a group holding `marked` devices
 * (slow or drained) comes after the groups with fewer marked ones (stable: the machines' order
 * within the same count). The placements prefer earlier nodes among equal ones, so a gang avoids
 * a straggling node while an equal one is free, and still gets it when nothing else fits. With no
 * marks the order is the machines' one, so a cluster without marks is decided on as before. A
 * group's position may change between rounds; stored allocations name machines and are mapped
 * each round (`toGroups`), so running jobs do not move.
 */
export function typedInventory(machines: readonly BackendNode[], marked: readonly MarkedDevice[] = []): TypedInventory {
  const groups: DeviceGroup[] = [];
  machines.forEach((m, node) => {
    const mine = new Map<string, DeviceGroup>();
    const usable = new Set(m.devices.slice(0, m.usable).map((d) => d.index));
    for (const d of m.devices) {
      const type = deviceType(d);
      let g = mine.get(type);
      if (!g) mine.set(type, (g = { node, type, usable: [], all: [], marked: 0 }));
      g.all.push(d.index);
      if (usable.has(d.index)) g.usable.push(d.index);
      if (marked.some((k) => k.node === m.name && k.device === d.index)) g.marked += 1;
    }
    if (mine.size === 0) mine.set('cpu', { node, type: 'cpu', usable: [], all: [], marked: 0 });
    groups.push(...mine.values());
  });
  // Array.prototype.sort is stable: equal counts keep the machines' order (all of it without marks).
  if (marked.length > 0) groups.sort((a, b) => a.marked - b.marked);
  // Groups per machine, counted once (a scan of every group per group was 16 million steps a
  // round at 4,096 machines: issue #49).
  const groupsOf = new Map<number, number[]>();
  groups.forEach((g, i) => {
    const list = groupsOf.get(g.node);
    if (list) list.push(i);
    else groupsOf.set(g.node, [i]);
  });
  const nodes = groups.map((g, index): NodeInfo => {
    const machine = machines[g.node]!;
    const alone = groupsOf.get(g.node)!.length === 1;
    return {
      index,
      name: alone ? machine.name : `${machine.name}/${g.type}`,
      gpus: g.usable.length,
      preemptible: false,
      gpu_type: g.type,
    };
  });
  return { nodes, groups, groupsOf, mixed: new Set(nodes.map(gpuTypeOf)).size > 1 };
}

/**
 * Group of each replica of a stored binding (backend node and device per replica). A device the
 * inventory no longer lists (a node that vanished) counts in its machine's first group, as its
 * machine did before types were known.
 */
export function toGroups(inv: TypedInventory, allocation: readonly number[], devices: readonly number[]): number[] {
  return allocation.map((node, i) => {
    // The machine's own groups only (a search of every group per replica was 32 million steps a
    // round at 16,384 GPUs: issue #49).
    const mine = inv.groupsOf.get(node) ?? [];
    const exact = mine.find((g) => inv.groups[g]!.all.includes(devices[i]!));
    return exact ?? mine[0] ?? -1;
  });
}

/** The backend node of each replica of a policy allocation. */
export function toMachines(inv: TypedInventory, allocation: Allocation): number[] {
  return allocation.map((g) => inv.groups[g]!.node);
}

/** Whether the inventory holds more than one GPU type. */
export function isMixed(inv: TypedInventory): boolean {
  return inv.mixed;
}
