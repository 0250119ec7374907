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
  gpu_type: string;
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
  /** Leader's id for a heterogeneous job component, else 0. */
  het_job_id: number;
}

/** States in which a Slurm job holds or will hold resources. */
export const ACTIVE_JOB_STATES: ReadonlySet<string> = new Set(['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'RESIZING', 'SIGNALING', 'STAGE_OUT']);
const HOLDING_STATES: ReadonlySet<string> = new Set(['CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'SIGNALING', 'STAGE_OUT']);
const UNUSABLE_FLAGS = ['DRAIN', 'DRAINING', 'DRAINED', 'FAIL', 'FAILING', 'MAINTENANCE', 'MAINT', 'REBOOT_REQUESTED', 'REBOOT_ISSUED', 'NOT_RESPONDING', 'POWERED_DOWN', 'POWERING_DOWN', 'RESERVED', 'INVALID', 'INVALID_REG'];
const USABLE_STATES = new Set(['idle', 'mixed', 'allocated', 'completing']);

type Json = Record<string, unknown>;

/** GPUs in a GRES string such as `gpu:a100:4(S:0-1),gpu:v100:2` or `gpu:2(IDX:0-1)`; and the first type. */
export function parseGres(gres: string): { count: number; type: string } {
  let count = 0;
  let type = '';
  for (const item of gres.split(/,(?![^(]*\))/)) {
    const [name, ...rest] = item.replace(/\(.*\)$/, '').split(':');
    if (name !== 'gpu') continue;
    const n = Number(rest[rest.length - 1]);
    if (!Number.isFinite(n)) continue;
    count += n;
    if (!type && rest.length > 1) type = rest[0]!;
  }
  return { count, type };
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
    throw new GoodputError('E_BACKEND_UNAVAILABLE', `${command} --json failed (${what}); check that slurmctld is up and reachable ('sinfo' works here)`);
  }
  const list = data[key];
  if (!Array.isArray(list)) throw new GoodputError('E_BACKEND_UNAVAILABLE', `${command} --json: no "${key}" list (Slurm 22.05 or newer is needed)`);
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
      cpus: Number(n.cpus ?? 0),
      state: (Array.isArray(state) ? String(state[0] ?? '') : String(state ?? '')).toLowerCase(),
      flags: (Array.isArray(state) ? state.slice(1) : (n.state_flags as unknown[] | undefined) ?? []).map((f) => String(f).toUpperCase()),
      partitions: ((n.partitions as unknown[] | undefined) ?? []).map(String),
      reason: String(n.reason ?? ''),
    };
  });
}

/** Jobs of `squeue --json`; throws E_BACKEND_UNAVAILABLE on an error answer. */
export function parseSqueue(text: string): SlurmJob[] {
  return listOf('squeue', text, 'jobs').map((j) => {
    const nodes = expandHostlist(String(j.nodes ?? ''));
    const detail = ((j.gres_detail as unknown[] | undefined) ?? []).map((g) => parseGres(String(g)).count);
    const state = j.job_state;
    return {
      job_id: Number(j.job_id),
      name: String(j.name ?? ''),
      state: (Array.isArray(state) ? String(state[0] ?? '') : String(state ?? '')).toUpperCase(),
      reason: String(j.state_reason ?? ''),
      nodes,
      gpus_per_node: nodes.map((_, i) => detail[i] ?? 0),
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
 * or down nodes and GPUs held by jobs for which `ours(name)` is false.
 */
export function buildInventory(order: readonly string[], nodes: readonly SlurmNode[], jobs: readonly SlurmJob[], ours: (jobName: string) => boolean, partition?: string): { order: string[]; nodes: BackendNode[] } {
  const inPartition = nodes.filter((n) => n.gpus > 0 && (partition === undefined || n.partitions.includes(partition)));
  const byName = new Map(inPartition.map((n) => [n.name, n]));
  const names = [...order, ...[...byName.keys()].filter((n) => !order.includes(n)).sort()];
  const foreign = new Map<string, number>();
  for (const job of jobs) {
    if (!HOLDING_STATES.has(job.state) || ours(job.name)) continue;
    job.nodes.forEach((n, i) => foreign.set(n, (foreign.get(n) ?? 0) + (job.gpus_per_node[i] ?? 0)));
  }
  return {
    order: names,
    nodes: names.map((name) => {
      const n = byName.get(name);
      if (!n) return { name, address: name, devices: [], usable: 0, note: 'is no longer listed by Slurm' };
      const devices: DeviceInfo[] = Array.from({ length: n.gpus }, (_, index) => ({ index, kind: 'gpu' as const, name: n.gpu_type || 'gpu' }));
      const unusable = nodeUnusable(n);
      const taken = Math.min(n.gpus, foreign.get(name) ?? 0);
      if (unusable) return { name, address: n.address, devices, usable: 0, note: unusable };
      return { name, address: n.address, devices, usable: n.gpus - taken, note: taken > 0 ? `${taken} GPU(s) held by other Slurm jobs` : '' };
    }),
  };
}
