/**
 * Policies for clusters of several GPU types: the snapshot carries typed nodes and, per job, a
 * goodput model per type (what the job measured there, if anything) and the trace-free facts a
 * scheduler may use to transfer a model to a type the job has not run on. Pure.
 */
import { gpuTypeOf, type Allocation, type NodeInfo } from '../core/cluster.js';
import type { BatchLimits, GoodputModel } from '../goodput/types.js';

/** What a typed policy knows of one active job. */
export interface TypedJob {
  id: string;
  /** Application (profile key). */
  key: string;
  submitted_at_s: number;
  attained_service_gpu_s: number;
  restarts: number;
  /** Hard cap on GPUs (1 for jobs that do not scale). */
  max_replicas: number;
  /** Fixed total batch size, if the job does not adapt it. */
  fixed_batch_size?: number;
  /** Largest replica count measured on each type (0: never ran there). */
  max_profiled: Readonly<Record<string, number>>;
  /** Goodput model on `type` from the job's measurements there; undefined if none. */
  model(type: string): GoodputModel | undefined;
  /**
   * Goodput model on `type` where neither the job nor its key has measured, transferred from its
   * measured type with what other keys measured on both (goodput/type-transfer-model.ts);
   * undefined where there is nothing to transfer from. Absent: never transferred.
   */
  transferred?(type: string): GoodputModel | undefined;
  limits(type: string): BatchLimits;
  /** One-GPU samples/s of the job's application on each type (Sia's bootstrap profile). */
  one_gpu_samples_per_s: Readonly<Record<string, number>>;
  /** Training left in B0-equivalent samples. */
  remaining_samples: number;
  /** Seconds a restart of the job costs (measured on its earlier restarts, or its key's). */
  restart_s: number;
  /** Whether a restart is still under way (its allocation should be kept). */
  restarting: boolean;
}

/** One round's view of a mixed cluster. */
export interface TypedSnapshot {
  now_s: number;
  /** Every node has a `gpu_type`. */
  nodes: readonly NodeInfo[];
  jobs: readonly TypedJob[];
  allocations: Readonly<Record<string, Allocation>>;
}

/** A scheduling policy for a mixed cluster: every allocation is on nodes of one type. */
export interface TypedPolicy {
  readonly name: string;
  /** Whether jobs keep one model over all types (type-unaware), instead of one per type. */
  readonly pooled_models?: boolean;
  /**
   * Whether a job's model on a type includes what the other jobs of its key (application)
   * measured there, as the control plane's profiles do. Absent: its own measurements only.
   */
  readonly uses_profiles?: boolean;
  /**
   * With profiles: whether a job's model is corrected by its key's measurements where measured
   * (goodput/step-correction.ts), as the control plane's is. Absent: corrected.
   */
  readonly corrects_profiles?: boolean;
  /** With profiles: whether it reads `TypedJob.transferred` (so the simulator keeps transfers). Absent: no. */
  readonly transfers_models?: boolean;
  decide(snapshot: TypedSnapshot): Record<string, Allocation>;
}

/** Per type: node indices and GPUs per node (first node's), in node order. */
export interface TypeGroup {
  type: string;
  nodes: number[];
  gpus_per_node: number;
  total_gpus: number;
}

/** The cluster's types in first-appearance order. */
export function typeGroups(nodes: readonly NodeInfo[]): TypeGroup[] {
  const out = new Map<string, TypeGroup>();
  for (const n of nodes) {
    const t = gpuTypeOf(n);
    let g = out.get(t);
    if (!g) out.set(t, (g = { type: t, nodes: [], gpus_per_node: n.gpus, total_gpus: 0 }));
    g.nodes.push(n.index);
    g.total_gpus += n.gpus;
  }
  return [...out.values()];
}

/** The type of a (one-type) allocation, or undefined for an empty one. */
export function allocationType(nodes: readonly NodeInfo[], alloc: Allocation | undefined): string | undefined {
  return alloc && alloc.length > 0 ? gpuTypeOf(nodes[alloc[0]!]!) : undefined;
}
