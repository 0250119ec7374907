/**
 * The configurations of the typed policies (Sia's set) and what the policies read of them per
 * round: each type's run in the list, the types of a round in order, a configuration's name. Pure.
 */
import type { TypeGroup } from '../typed.js';

/** One allocatable configuration: `gpus` GPUs on `nodes` nodes of `type`. */
export interface SiaConfig {
  type: string;
  nodes: number;
  gpus: number;
}

/**
 * Sia's configuration set: on a type with g GPUs per node, 1, 2, 4, ... GPUs below g on one
 * node, then whole nodes (g, 2g, ...) up to the type's node count.
 */
export function siaConfigs(groups: readonly TypeGroup[]): SiaConfig[] {
  const out: SiaConfig[] = [];
  for (const g of groups) {
    for (let r = 1; r < g.gpus_per_node; r *= 2) out.push({ type: g.type, nodes: 1, gpus: r });
    for (let n = 1; n <= g.nodes.length; n++) out.push({ type: g.type, nodes: n, gpus: n * g.gpus_per_node });
  }
  return out;
}

/**
 * Each type's run of configurations in `configs` (siaConfigs makes one contiguous run per type,
 * GPUs ascending): type i's are from runs[2i] to runs[2i + 1] - 1. Computed once per list.
 */
const runsOfConfigs = new WeakMap<readonly SiaConfig[], Int32Array>();
export function typeRuns(configs: readonly SiaConfig[], types: readonly string[]): Int32Array {
  let out = runsOfConfigs.get(configs);
  if (!out) {
    out = new Int32Array(2 * types.length);
    types.forEach((t, i) => {
      const first = configs.findIndex((c) => c.type === t);
      let end = first < 0 ? 0 : first;
      while (end < configs.length && configs[end]!.type === t) end++;
      out![2 * i] = first < 0 ? 0 : first;
      out![2 * i + 1] = end;
    });
    runsOfConfigs.set(configs, out);
  }
  return out;
}

/** The types of a round's GPUs-per-node map, in its order: one array per map, not per job. */
const typesOfMaps = new WeakMap<ReadonlyMap<string, number>, readonly string[]>();
export function typesOf(gpn: ReadonlyMap<string, number>): readonly string[] {
  let types = typesOfMaps.get(gpn);
  if (!types) typesOfMaps.set(gpn, (types = [...gpn.keys()]));
  return types;
}

/** A configuration's name in a job's memory of it: its type and GPU count. */
export function configKey(c: SiaConfig): string {
  return `${c.type}/${c.gpus}`;
}
