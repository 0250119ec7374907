/**
 * A ClusterSnapshot as plain data, for a policy that decides in a worker thread (policy-thread.ts):
 * a job's facts per GPU type (JobTypes) are functions, which a message cannot carry, so they go
 * as records by type and are rebuilt on the other side. Pure.
 */
import { gpuTypeOf, type ClusterSnapshot, type JobTypes, type PolicyJob } from '../../core/cluster.js';
import type { BatchLimits, GoodputModel } from '../../goodput/types.js';
import { buildJobTypes } from '../../model/job-types.js';

/** JobTypes as records by type (every type of the snapshot's nodes). */
export interface WireJobTypes {
  types: readonly string[];
  models: Readonly<Record<string, GoodputModel | null>>;
  /** Absent: the driver keeps no transfers (JobTypes.transferred absent). */
  transferred?: Readonly<Record<string, GoodputModel | null>>;
  limits: Readonly<Record<string, BatchLimits>>;
  max_profiled: Readonly<Record<string, number>>;
  one_gpu_samples_per_s: Readonly<Record<string, number>>;
  remaining_samples: number;
  restart_s: number;
  restarting: boolean;
}

/** A PolicyJob whose `per_type` is plain data. */
export type WireJob = Omit<PolicyJob, 'per_type'> & { per_type?: WireJobTypes };

/** A ClusterSnapshot that structured clone carries whole (no functions). */
export type WireSnapshot = Omit<ClusterSnapshot, 'jobs'> & { jobs: readonly WireJob[] };

/** The types a snapshot's nodes have (a JobTypes answers for each of them). */
export function snapshotTypes(snapshot: ClusterSnapshot): string[] {
  return [...new Set(snapshot.nodes.map(gpuTypeOf))];
}

/**
 * `t` as records by type. A type's model equal to the job's own (`own`: on one type, always) is
 * given as that very object, which a structured copy then carries once, not twice.
 */
function wireTypes(t: JobTypes, types: readonly string[], own: GoodputModel | undefined): WireJobTypes {
  const models: Record<string, GoodputModel | null> = {};
  const limits: Record<string, BatchLimits> = {};
  for (const type of types) {
    const model = t.model(type);
    models[type] = model === undefined ? null : own !== undefined && samePlain(model, own) ? own : model;
    limits[type] = t.limits(type);
  }
  let transferred: Record<string, GoodputModel | null> | undefined;
  if (t.transferred) {
    transferred = {};
    for (const type of types) transferred[type] = models[type] ? null : (t.transferred(type) ?? null);
  }
  return {
    types,
    models,
    ...(transferred ? { transferred } : {}),
    limits,
    max_profiled: t.max_profiled,
    one_gpu_samples_per_s: t.one_gpu_samples_per_s,
    remaining_samples: t.remaining_samples,
    restart_s: t.restart_s,
    restarting: t.restarting,
  };
}

/**
 * `snapshot` as plain data. Reads every job's model and limits on every type (and its transfer
 * where it has no model there): what a policy may ask; each is a lookup or a formula.
 */
export function toWire(snapshot: ClusterSnapshot): WireSnapshot {
  return { ...snapshot, jobs: toWireJobs(snapshot.jobs, snapshotTypes(snapshot)) };
}

/** Jobs of a snapshot whose nodes have `types` (snapshotTypes), as toWire gives them: a part of a snapshot sent in parts. */
export function toWireJobs(jobs: readonly PolicyJob[], types: readonly string[]): WireJob[] {
  return jobs.map((j) => (j.per_type ? { ...j, per_type: wireTypes(j.per_type, types, j.model) } : (j as WireJob)));
}

/** The snapshot `toWire` was given, rebuilt from its plain data (a policy decides the same on both). */
export function fromWire(wire: WireSnapshot): ClusterSnapshot {
  return {
    ...wire,
    jobs: wire.jobs.map((j): PolicyJob => {
      const w = j.per_type;
      if (!w) return j as PolicyJob;
      const per_type = buildJobTypes({
        types: w.types,
        own_type: undefined, // only read to derive the one-GPU rates, which come given
        model: (t) => w.models[t] ?? undefined,
        ...(w.transferred ? { transferred: (t: string) => w.transferred![t] ?? undefined } : {}),
        limits: (t) => w.limits[t]!,
        max_profiled: w.max_profiled,
        one_gpu_samples_per_s: w.one_gpu_samples_per_s,
        remaining_samples: w.remaining_samples,
        restart_s: w.restart_s,
        restarting: w.restarting,
      });
      return { ...j, per_type };
    }),
  };
}

/**
 * Whether two values of plain data (numbers, strings, booleans, arrays, objects) are equal. Not
 * node:util's isDeepStrictEqual: this runs for every job of every round on the server's thread,
 * and for 3,000 models it took 10-12 ms there against 3.3-3.5 ms here.
 */
function samePlain(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka)
    if (!samePlain((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}
