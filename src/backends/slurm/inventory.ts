/**
 * Parsing Slurm's machine-readable output (22.05: `sinfo --json`, `squeue --json`) into the
 * backend's inventory. Pure: no commands run here.
 */
import { GoodputError } from '../../core/errors.js';
import type { BackendNode, DeviceInfo } from '../backend.js';
import { expandHostlist } from './hostlist.js';

/** One node as `sinfo --json` describes it (the fields Goodput reads). */
export interface SlurmNode {
  name: string;
  address: string;
  gpus: number;
  /** Its first GPU type ('' untyped). */
  gpu_type: string;
  /** Its GPUs per type, in GRES order: a node of `gpu:a100:2,gpu:t4:2` has two. Absent: all of `gpu_type`. */
  gpu_types?: GresType[];
  cpus: number;
  /** Lower-case base state (idle, mixed, allocated, down, drained, ...). */
  state: string;
  flags: string[];
  partitions: string[];
  reason: string;
}

/** One job as `squeue --json` describes it (the fields Goodput reads). */
export interface SlurmJob {
  job_id: number;
  name: string;
  /** Upper-case state: PENDING, RUNNING, COMPLETING, COMPLETED, CANCELLED, FAILED, NODE_FAIL ... */
  state: string;
  reason: string;
  nodes: string[];
  /** GPUs held on each of `nodes` (from gres_detail; 0 when unknown). */
  gpus_per_node: number[];
  /** The same per GPU type ('' untyped). */
  gpu_types_per_node: GresType[][];
  /** Leader's id for a heterogeneous job component, else 0. */
  het_job_id: number;
}

/** States in which a Slurm job holds or will hold resources. */
export const ACTIVE_JOB_STATES: ReadonlySet<string> = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'RESIZING',
  'SIGNALING',
  'STAGE_OUT',
]);
const HOLDING_STATES: ReadonlySet<string> = new Set([
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'SIGNALING',
  'STAGE_OUT',
]);
const UNUSABLE_FLAGS = [
  'DRAIN',
  'DRAINING',
  'DRAINED',
  'FAIL',
  'FAILING',
  'MAINTENANCE',
  'MAINT',
  'REBOOT_REQUESTED',
  'REBOOT_ISSUED',
  'NOT_RESPONDING',
  'POWERED_DOWN',
  'POWERING_DOWN',
  'RESERVED',
  'INVALID',
  'INVALID_REG',
];
const USABLE_STATES = new Set(['idle', 'mixed', 'allocated', 'completing']);

type Json = Record<string, unknown>;

/** GPUs of one type in a GRES string (`type` '' for untyped `gpu:N`). */
export interface GresType {
  type: string;
  count: number;
}

/**
 * GPUs in a GRES string such as `gpu:a100:4(S:0-1),gpu:v100:2` or `gpu:2(IDX:0-1)`: their count,
 * the first type, and the count per type in order of appearance (one entry per type).
 */
export function parseGres(gres: string): { count: number; type: string; types: GresType[] } {
  let count = 0;
  const types: GresType[] = [];
  for (const item of gres.split(/,(?![^(]*\))/)) {
    const [name, ...rest] = item.replace(/\(.*\)$/, '').split(':');
    if (name !== 'gpu') continue;
    const n = Number(rest[rest.length - 1]);
    if (!Number.isFinite(n)) continue;
    count += n;
    const type = rest.length > 1 ? rest[0]! : '';
    const seen = types.find((t) => t.type === type);
    if (seen) seen.count += n;
    else types.push({ type, count: n });
  }
  return { count, type: types.find((t) => t.type !== '')?.type ?? '', types };
}

/**
 * The answer's list `key`. sinfo and squeue exit 0 with an empty list and an `errors` entry when
 * slurmctld cannot be reached: that is E_BACKEND_UNAVAILABLE, never "no nodes" or "no jobs".
 */
function listOf(command: string, text: string, key: 'nodes' | 'jobs'): Json[] {
  const data = JSON.parse(text) as Record<string, unknown>;
  const errors = (data.errors as Json[] | undefined) ?? [];
  if (errors.length > 0) {
    const what = errors.map((e) => [e.description, e.error, e.source].filter(Boolean).join(': ')).join('; ');
    throw new GoodputError(
      'E_BACKEND_UNAVAILABLE',
      `${command} --json failed (${what}); check that slurmctld is up and reachable ('sinfo' works here)`,
    );
  }
  const list = data[key];
  if (!Array.isArray(list))
    throw new GoodputError(
      'E_BACKEND_UNAVAILABLE',
      `${command} --json: no "${key}" list (Slurm 22.05 or newer is needed)`,
    );
  return list as Json[];
}

/** Nodes of `sinfo --json`; throws E_BACKEND_UNAVAILABLE on an error answer. */
export function parseSinfo(text: string): SlurmNode[] {
  return listOf('sinfo', text, 'nodes').map((n) => {
    const gres = parseGres(String(n.gres ?? ''));
    const state = n.state;
    return {
      name: String(n.name),
      address: String(n.address || n.hostname || n.name),
      gpus: gres.count,
      gpu_type: gres.type,
      gpu_types: gres.types,
      cpus: Number(n.cpus ?? 0),
      state: (Array.isArray(state) ? String(state[0] ?? '') : String(state ?? '')).toLowerCase(),
      flags: (Array.isArray(state) ? state.slice(1) : ((n.state_flags as unknown[] | undefined) ?? [])).map((f) =>
        String(f).toUpperCase(),
      ),
      partitions: ((n.partitions as unknown[] | undefined) ?? []).map(String),
      reason: String(n.reason ?? ''),
    };
  });
}

/** Jobs of `squeue --json`; throws E_BACKEND_UNAVAILABLE on an error answer. */
export function parseSqueue(text: string): SlurmJob[] {
  return listOf('squeue', text, 'jobs').map((j) => {
    const nodes = expandHostlist(String(j.nodes ?? ''));
    const detail = ((j.gres_detail as unknown[] | undefined) ?? []).map((g) => parseGres(String(g)));
    const state = j.job_state;
    return {
      job_id: Number(j.job_id),
      name: String(j.name ?? ''),
      state: (Array.isArray(state) ? String(state[0] ?? '') : String(state ?? '')).toUpperCase(),
      reason: String(j.state_reason ?? ''),
      nodes,
      gpus_per_node: nodes.map((_, i) => detail[i]?.count ?? 0),
      gpu_types_per_node: nodes.map((_, i) => detail[i]?.types ?? []),
      het_job_id: Number(j.het_job_id ?? 0),
    };
  });
}

/** Why a node cannot take Goodput's work, or '' when it can. */
export function nodeUnusable(node: SlurmNode): string {
  const flag = node.flags.find((f) => UNUSABLE_FLAGS.includes(f));
  if (USABLE_STATES.has(node.state) && !flag) return '';
  const what = flag ? flag.toLowerCase() : node.state;
  return `is ${what}${node.reason ? ` (${node.reason})` : ''}`;
}

/**
 * The inventory: `order` fixes node positions (names seen before keep theirs, new ones are
 * appended in name order, vanished ones stay with nothing usable). Usable GPUs exclude drained
 * or down nodes and GPUs held by jobs for which `ours(name)` is false. A node of several GPU
 * types lists its devices by type (indices in GRES order); since the first `usable` devices are
 * the usable ones, its free devices of every type come first (devicesOf).
 */
export function buildInventory(
  order: readonly string[],
  nodes: readonly SlurmNode[],
  jobs: readonly SlurmJob[],
  ours: (jobName: string) => boolean,
  partition?: string,
): { order: string[]; nodes: BackendNode[] } {
  const inPartition = nodes.filter((n) => n.gpus > 0 && (partition === undefined || n.partitions.includes(partition)));
  const byName = new Map(inPartition.map((n) => [n.name, n]));
  const names = [...order, ...[...byName.keys()].filter((n) => !order.includes(n)).sort()];
  const foreign = new Map<string, number>();
  const foreignTyped = new Map<string, GresType[]>();
  for (const job of jobs) {
    if (!HOLDING_STATES.has(job.state) || ours(job.name)) continue;
    job.nodes.forEach((n, i) => {
      foreign.set(n, (foreign.get(n) ?? 0) + (job.gpus_per_node[i] ?? 0));
      foreignTyped.set(n, [...(foreignTyped.get(n) ?? []), ...(job.gpu_types_per_node[i] ?? [])]);
    });
  }
  return {
    order: names,
    nodes: names.map((name) => {
      const n = byName.get(name);
      if (!n) return { name, address: name, devices: [], usable: 0, note: 'is no longer listed by Slurm' };
      const unusable = nodeUnusable(n);
      const taken = Math.min(n.gpus, foreign.get(name) ?? 0);
      const devices = devicesOf(n, foreignTyped.get(name) ?? []);
      if (unusable) return { name, address: n.address, devices, usable: 0, note: unusable };
      return {
        name,
        address: n.address,
        devices,
        usable: n.gpus - taken,
        note: taken > 0 ? `${taken} GPU(s) held by other Slurm jobs` : '',
      };
    }),
  };
}

/**
 * A node's devices, indices in GRES order, each named by its GRES type (`gpu` untyped). On a node
 * of several types, the devices other jobs hold (`held`, per type; untyped holdings counted off
 * the types in order) are listed last, so that the first `usable` are the free ones of each type.
 */
function devicesOf(n: SlurmNode, held: readonly GresType[]): DeviceInfo[] {
  const segments = n.gpu_types && n.gpu_types.length > 0 ? n.gpu_types : [{ type: n.gpu_type, count: n.gpus }];
  let index = 0;
  const typed = segments.map((seg) => ({
    seg,
    devices: Array.from({ length: seg.count }, (): DeviceInfo => ({
      index: index++,
      kind: 'gpu',
      name: seg.type || 'gpu',
    })),
  }));
  if (typed.length === 1) return typed[0]!.devices;
  let untyped = held.filter((h) => h.type === '').reduce((k, h) => k + h.count, 0);
  const free: DeviceInfo[] = [];
  const busy: DeviceInfo[] = [];
  for (const { seg, devices } of typed) {
    let taken = Math.min(
      seg.count,
      held.filter((h) => h.type === seg.type).reduce((k, h) => k + h.count, 0),
    );
    const extra = Math.min(seg.count - taken, untyped);
    untyped -= extra;
    taken += extra;
    free.push(...devices.slice(0, seg.count - taken));
    busy.push(...devices.slice(seg.count - taken));
  }
  return [...free, ...busy];
}
