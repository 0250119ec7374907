/**
 * Applications of a mixed-type cluster: per GPU type, the true step and sync time of any
 * placement from that type's Sia-format traces (`placements-<type>.csv`, `scalability-<type>.csv`,
 * read by sia-traces.ts), and the type-independent gradient statistics and epochs of the
 * application's validation files (application.ts). Calibration and restart times are the Sia
 * artifact's (data/sia SOURCES.md).
 */
import { join } from 'node:path';
import { GoodputError } from '../../core/errors.js';
import type { TypeMeasurement } from '../../goodput/type-measurement.js';
import type { BatchLimits } from '../../goodput/types.js';
import { canonicalPlacementId, getApplication, type TraceApplication } from '../application.js';
import type { StepSync } from '../nd-table.js';
import { readSiaTraces } from '../sia-traces.js';

/**
 * Measured time over trace time, per application (the artifact's calibration to its RTX cluster):
 * simulated progress runs at 1 / slowdown of the traces' rate.
 */
export const SIA_SLOWDOWNS: Readonly<Record<string, number>> = {
  cifar10: 1.8,
  imagenet: 1.2,
  yolov3: 1.2,
  bert: 1.2,
  deepspeech2: 1.2,
  ncf: 1.5,
};

/** Seconds a (re)start costs, per application, as the artifact's application model charges them. */
export const SIA_RESCALE_S: Readonly<Record<string, number>> = {
  cifar10: 50,
  deepspeech2: 25,
  bert: 120,
  yolov3: 80,
  imagenet: 250,
  ncf: 15,
};

interface Rows {
  bsz: number[];
  step: number[];
  sync: number[];
}

/** One application's throughput on one GPU type. */
export class TypeThroughput {
  readonly min_local_bsz: number;
  readonly max_local_bsz: number;
  /** Samples/s of one GPU at the largest measured one-GPU batch: the input of Sia's ratio rule. */
  readonly one_gpu_samples_per_s: number;
  private readonly byPlacement = new Map<number, Rows>();
  private readonly byShape = new Map<string, Rows>();
  private readonly replicasByNodes = new Map<number, number[]>();
  private readonly memo = new Map<string, StepSync>();

  constructor(
    readonly type: string,
    rows: readonly TypeMeasurement[],
  ) {
    for (const m of rows) {
      if (m.placement) addRow(this.byPlacement, canonicalPlacementId(m.placement), m);
      addRow(this.byShape, `${m.num_nodes}/${m.num_replicas}`, m);
      const list = this.replicasByNodes.get(m.num_nodes) ?? [];
      if (!list.includes(m.num_replicas)) list.push(m.num_replicas);
      this.replicasByNodes.set(
        m.num_nodes,
        list.sort((a, b) => a - b),
      );
    }
    this.min_local_bsz = Math.min(...rows.map((m) => m.local_bsz));
    this.max_local_bsz = Math.max(...rows.map((m) => m.local_bsz));
    const one = rows.filter((m) => m.num_replicas === 1);
    if (one.length === 0) throw new GoodputError('E_INPUT', `GPU type ${type}: no one-GPU measurement`);
    this.one_gpu_samples_per_s = Math.max(...one.map((m) => m.local_bsz)) / Math.max(...one.map((m) => m.step_time_s));
  }

  /**
   * (step, sync) seconds of `placement` (GPUs per node) at per-GPU batch `local_bsz`: linear in
   * the batch over the placement's rows when measured; else over the rows of its (nodes,
   * replicas) shape; else linear in the replica count between the nearest measured shapes with
   * as many nodes (flat beyond the largest). Batches outside the measured range are clamped.
   */
  throughput(placement: readonly number[], local_bsz: number): StepSync {
    const groups = placement.filter((g) => g > 0);
    const id = canonicalPlacementId(groups);
    const key = `${id}:${local_bsz}`;
    let hit = this.memo.get(key);
    if (hit) return hit;
    const n = groups.length;
    const r = groups.reduce((s, g) => s + g, 0);
    const exact = this.byPlacement.get(id) ?? this.byShape.get(`${n}/${r}`);
    if (exact) hit = interpolate(exact, local_bsz);
    else hit = this.acrossReplicas(n, r, local_bsz);
    this.memo.set(key, hit);
    return hit;
  }

  /** Largest per-GPU batch measured at `placement`'s shape (or overall). */
  maxLocalBsz(placement: readonly number[]): number {
    const groups = placement.filter((g) => g > 0);
    const rows = this.byPlacement.get(canonicalPlacementId(groups));
    return rows ? rows.bsz[rows.bsz.length - 1]! : this.max_local_bsz;
  }

  private acrossReplicas(n: number, r: number, b: number): StepSync {
    const nodes = [...this.replicasByNodes.keys()].sort((x, y) => x - y);
    const useN = nodes.filter((x) => x <= n).pop() ?? nodes[0]!;
    const list = this.replicasByNodes.get(useN)!;
    const lo = list.filter((x) => x <= r).pop();
    const hi = list.find((x) => x >= r);
    const at = (rr: number) => interpolate(this.byShape.get(`${useN}/${rr}`)!, b);
    if (lo === undefined) return at(hi!);
    if (hi === undefined || hi === lo) return at(lo);
    const [s0, y0] = at(lo);
    const [s1, y1] = at(hi);
    const t = (r - lo) / (hi - lo);
    return [s0 + (s1 - s0) * t, y0 + (y1 - y0) * t];
  }
}

function addRow(map: Map<number | string, Rows>, key: number | string, m: TypeMeasurement): void {
  let rows = map.get(key);
  if (!rows) map.set(key, (rows = { bsz: [], step: [], sync: [] }));
  const i = rows.bsz.findIndex((b) => b >= m.local_bsz);
  if (i >= 0 && rows.bsz[i] === m.local_bsz) return;
  const at = i < 0 ? rows.bsz.length : i;
  rows.bsz.splice(at, 0, m.local_bsz);
  rows.step.splice(at, 0, m.step_time_s);
  rows.sync.splice(at, 0, m.sync_time_s);
}

function interpolate(rows: Rows, b: number): StepSync {
  const xs = rows.bsz;
  if (xs.length === 1 || b <= xs[0]!) return [rows.step[0]!, rows.sync[0]!];
  if (b >= xs[xs.length - 1]!) return [rows.step[xs.length - 1]!, rows.sync[xs.length - 1]!];
  let hi = 1;
  while (xs[hi]! < b) hi++;
  const lo = hi - 1;
  const t = (b - xs[lo]!) / (xs[hi]! - xs[lo]!);
  return [
    rows.step[lo]! + (rows.step[hi]! - rows.step[lo]!) * t,
    rows.sync[lo]! + (rows.sync[hi]! - rows.sync[lo]!) * t,
  ];
}

/** An application on every GPU type of a trace directory. */
export interface HeteroApplication {
  name: string;
  /** Validation statistics, epochs and total batch range (type-independent). */
  base: TraceApplication;
  byType: ReadonlyMap<string, TypeThroughput>;
  /** Progress-rate multiplier (1 / the artifact's slowdown). */
  calibration: number;
  rescale_s: number;
}

/** Batch limits of `app` on `type`. */
export function typeLimits(app: HeteroApplication, type: string): BatchLimits {
  const t = app.byType.get(type)!;
  return {
    init_batch_size: app.base.init_batch_size,
    max_batch_size: app.base.max_batch_size,
    min_local_bsz: t.min_local_bsz,
    max_local_bsz: t.max_local_bsz,
    accumulation: true,
  };
}

/**
 * Reads every application of the Sia-format directory `dir` that has validation files and
 * traces for each of `types`. Throws E_INPUT naming a type no application has.
 */
export function loadHeteroApplications(dir: string, types: readonly string[]): Map<string, HeteroApplication> {
  const traces = readSiaTraces(dir);
  for (const t of types)
    if (!traces.types.includes(t))
      throw new GoodputError(
        'E_INPUT',
        `${dir}: no traces for GPU type '${t}' (types found: ${traces.types.join(', ')})`,
      );
  const out = new Map<string, HeteroApplication>();
  for (const a of traces.applications) {
    if (!types.every((t) => a.byType.has(t))) continue;
    const base = getApplication(a.name, dir);
    if (!base) continue;
    const byType = new Map(types.map((t) => [t, new TypeThroughput(t, a.byType.get(t)!)]));
    out.set(a.name, {
      name: a.name,
      base,
      byType,
      calibration: 1 / (SIA_SLOWDOWNS[a.name] ?? 1),
      rescale_s: SIA_RESCALE_S[a.name] ?? 30,
    });
  }
  if (out.size === 0)
    throw new GoodputError(
      'E_INPUT',
      `${join(dir)}: no application has traces for every type of the cluster (${types.join(', ')}) and validation files`,
    );
  return out;
}
