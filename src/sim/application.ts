import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inputError } from '../core/errors.js';
import type { BatchLimits } from '../goodput/types.js';
import { numberCell, parseCsv } from './csv.js';
import { ndInterpTable, ndKey, type StepSync } from './nd-table.js';

/** Per-application overrides of the trace-derived defaults (pollux-spec §2.2). */
export interface AppOverrides {
  max_epochs?: number;
  max_local_bsz?: number;
  /** Parameters of the application's model: what its jobs report of their gradient size. */
  model_parameters?: number;
}

interface PlacementRows {
  bsz: number[];
  step: number[];
  sync: number[];
}

interface ValidationRows {
  progress: number[];
  iteration: number[];
  grad_sqr: number[];
  grad_var: number[];
}

/**
 * One application model over its measured traces (pollux-spec §2): true throughput for any
 * placement and per-GPU batch, true gradient statistics, and epoch boundaries. All lookups are
 * memoized and deterministic; the numeric formulas mirror the original simulator so that results
 * agree to the last bit where it matters (interpolation order of operations included).
 */
export class TraceApplication {
  readonly name: string;
  /** B0: smallest validated total batch size. */
  readonly init_batch_size: number;
  readonly max_batch_size: number;
  readonly min_local_bsz: number;
  readonly max_local_bsz: number;
  /**
   * Batch limits as the goodput model sees them (accumulation always allowed): one object per
   * application, read every time a job re-picks its batch.
   */
  readonly limits: Readonly<BatchLimits>;
  readonly max_epochs: number;
  /**
   * Parameters of the model (what its gradient all-reduce moves), when known: reported by the
   * simulated jobs as the SDK reports a real model's, for the cluster network model. Not a
   * trace table: counted from
   * the model definitions (see `overrides`).
   */
  readonly model_parameters: number | undefined;
  /** Validated total batch sizes, ascending. */
  readonly validated_batch_sizes: readonly number[];
  private readonly placements = new Map<number, PlacementRows>();
  private readonly validation: ValidationRows[];
  private readonly throughputMemo = new Map<number | string, StepSync>();
  private readonly gradMemo = new Map<number, readonly [number, number]>();
  private readonly progressMemo: number[] = [];

  constructor(name: string, dir: string, overrides: AppOverrides = {}) {
    this.name = name;
    this.model_parameters = overrides.model_parameters;
    const placementsFile = join(dir, 'placements.csv');
    const table = parseCsv(readFileSync(placementsFile, 'utf8'), placementsFile, [
      'placement',
      'local_bsz',
      'step_time',
      'sync_time',
    ]);
    let minLocal = Infinity;
    let maxLocal = -Infinity;
    for (const row of table.rows) {
      const id = numberCell(table, row, 'placement', { integer: true, min: 1 });
      const bsz = numberCell(table, row, 'local_bsz', { min: 1 });
      let rows = this.placements.get(id);
      if (!rows) this.placements.set(id, (rows = { bsz: [], step: [], sync: [] }));
      if (rows.bsz.length > 0 && bsz <= rows.bsz[rows.bsz.length - 1]!)
        throw inputError(placementsFile, row.line, `local_bsz must increase within placement ${id}`);
      rows.bsz.push(bsz);
      rows.step.push(numberCell(table, row, 'step_time'));
      rows.sync.push(numberCell(table, row, 'sync_time'));
      minLocal = Math.min(minLocal, bsz);
      maxLocal = Math.max(maxLocal, bsz);
    }
    const files = readdirSync(dir)
      .map((f) => /^validation-(\d+)\.csv$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ bsz: Number(m[1]), file: join(dir, m[0]) }))
      .sort((a, b) => a.bsz - b.bsz);
    if (files.length === 0) throw inputError(dir, undefined, 'no validation-<batch size>.csv files');
    this.validated_batch_sizes = files.map((f) => f.bsz);
    this.validation = files.map(({ file }) => {
      const t = parseCsv(readFileSync(file, 'utf8'), file, ['progress', 'iteration', 'grad_sqr', 'grad_var']);
      const v: ValidationRows = { progress: [], iteration: [], grad_sqr: [], grad_var: [] };
      for (const row of t.rows) {
        v.progress.push(numberCell(t, row, 'progress'));
        v.iteration.push(numberCell(t, row, 'iteration'));
        v.grad_sqr.push(numberCell(t, row, 'grad_sqr'));
        v.grad_var.push(numberCell(t, row, 'grad_var'));
      }
      return v;
    });
    this.init_batch_size = this.validated_batch_sizes[0]!;
    this.max_batch_size = this.validated_batch_sizes[this.validated_batch_sizes.length - 1]!;
    this.min_local_bsz = minLocal;
    this.max_local_bsz = overrides.max_local_bsz ?? maxLocal;
    this.limits = Object.freeze({
      init_batch_size: this.init_batch_size,
      max_batch_size: this.max_batch_size,
      min_local_bsz: this.min_local_bsz,
      max_local_bsz: this.max_local_bsz,
      accumulation: true,
    });
    this.max_epochs = overrides.max_epochs ?? Math.min(...this.validation.map((v) => v.progress.length));
  }

  /** Progress (B0-iterations) needed to complete the job: `progressAt(max_epochs)`. */
  get target_progress(): number {
    return this.progressAt(this.max_epochs);
  }

  /** Last epoch index of training; the job completes when its epoch counter exceeds it. */
  get completion_epoch(): number {
    return this.max_epochs - 1;
  }

  /**
   * True (step time, sync time) in seconds for `placement` (GPUs per node, zeros ignored) at
   * per-GPU batch `local_bsz` (§2.3). Up to 4 nodes: 1-D linear interpolation over the measured
   * rows of the rotation-canonical placement; 5+ nodes: the precomputed N-D interpolation table.
   */
  throughput(placement: readonly number[], local_bsz: number): StepSync {
    const groups = placement.filter((g) => g > 0);
    const n = groups.length;
    if (n === 0) throw new Error(`${this.name}: throughput of an empty placement`);
    const integer = Number.isInteger(local_bsz) && local_bsz < 65536;
    if (n <= 4) {
      const id = canonicalPlacementId(groups);
      const key = integer ? id * 65536 + local_bsz : `${id}:${local_bsz}`;
      let hit = this.throughputMemo.get(key);
      if (!hit) this.throughputMemo.set(key, (hit = this.interpolatePlacement(id, local_bsz)));
      return hit;
    }
    const r = groups.reduce((s, g) => s + g, 0);
    const nodes = Math.min(n, 16);
    const key = integer ? -ndKey(nodes, r, local_bsz) : `nd:${nodes}:${r}:${local_bsz}`;
    let hit = this.throughputMemo.get(key);
    if (!hit) this.throughputMemo.set(key, (hit = this.lookupNd(nodes, r, local_bsz)));
    return hit;
  }

  /** True gradient statistics (sigma^2, nu) during `epoch` at total batch `batch_size` (§2.4). */
  gradStats(batch_size: number, epoch: number): readonly [sqr: number, variance: number] {
    const key = batch_size * 1024 + epoch;
    let hit = this.gradMemo.get(key);
    if (!hit) {
      const sqr = this.interpolateValidation(batch_size, (v) => v.grad_sqr[epoch]);
      const variance = this.interpolateValidation(batch_size, (v) => v.grad_var[epoch]);
      this.gradMemo.set(key, (hit = [sqr, variance]));
    }
    return hit;
  }

  /** Cumulative progress at the end of `epoch` epochs: min over validation files (§2.4). */
  progressAt(epoch: number): number {
    let hit = this.progressMemo[epoch];
    if (hit === undefined) {
      hit = epoch === 0 ? 0 : Math.min(...this.validation.map((v) => v.progress[epoch - 1] ?? NaN));
      if (!Number.isFinite(hit)) throw new Error(`${this.name}: no progress value for epoch ${epoch}`);
      this.progressMemo[epoch] = hit;
    }
    return hit;
  }

  /** Cumulative optimizer steps after epoch `epoch` at total batch `batch_size` (Optimus oracle). */
  iteration(batch_size: number, epoch: number): number {
    return this.interpolateValidation(batch_size, (v) => v.iteration[epoch]);
  }

  private interpolateValidation(batch_size: number, pick: (v: ValidationRows) => number | undefined): number {
    const sizes = this.validated_batch_sizes;
    let lo = -1;
    let hi = -1;
    for (let i = 0; i < sizes.length; i++) {
      if (sizes[i]! <= batch_size) lo = i;
      if (sizes[i]! >= batch_size) {
        hi = i;
        break;
      }
    }
    if (lo < 0 || hi < 0)
      throw new Error(
        `${this.name}: batch size ${batch_size} outside the validated range [${sizes[0]}, ${sizes[sizes.length - 1]}]`,
      );
    const lower = pick(this.validation[lo]!);
    const upper = pick(this.validation[hi]!);
    if (lower === undefined || upper === undefined)
      throw new Error(`${this.name}: epoch out of range of the validation traces`);
    if (lo === hi) return lower;
    const bl = sizes[lo]!;
    const bu = sizes[hi]!;
    // Same operation order as the original, so interpolated values agree bit for bit.
    return ((batch_size - bl) * upper + (bu - batch_size) * lower) / (bu - bl);
  }

  private interpolatePlacement(id: number, local_bsz: number): StepSync {
    const rows = this.placements.get(id);
    if (!rows) throw new Error(`${this.name}: placement ${id} missing from placements.csv`);
    const xs = rows.bsz;
    if (local_bsz < xs[0]! || local_bsz > xs[xs.length - 1]!) {
      throw new Error(
        `${this.name}: per-GPU batch ${local_bsz} outside the measured range [${xs[0]}, ${xs[xs.length - 1]}] of placement ${id}`,
      );
    }
    // scipy interp1d (linear): hi = first index with x >= b, clipped to [1, len-1].
    let hi = 1;
    while (hi < xs.length - 1 && xs[hi]! < local_bsz) hi++;
    if (xs.length === 1) return [rows.step[0]!, rows.sync[0]!];
    const lo = hi - 1;
    const dx = xs[hi]! - xs[lo]!;
    const t = local_bsz - xs[lo]!;
    return [
      ((rows.step[hi]! - rows.step[lo]!) / dx) * t + rows.step[lo]!,
      ((rows.sync[hi]! - rows.sync[lo]!) / dx) * t + rows.sync[lo]!,
    ];
  }

  private lookupNd(nodes: number, replicas: number, local_bsz: number): StepSync {
    const table = ndInterpTable().get(this.name);
    const exact = table?.get(ndKey(nodes, replicas, local_bsz));
    if (exact) return exact;
    // Outside what the original simulator could reach (the traces stop at 16 nodes x 4 GPUs):
    // clamp into the measured domain. An approximation, used only by non-artifact settings.
    if (table) {
      const r = Math.max(nodes, Math.min(replicas, 4 * nodes, 64));
      const b = Math.max(
        this.min_local_bsz,
        Math.min(Math.round(local_bsz), this.max_local_bsz, Math.floor(this.max_batch_size / r)),
      );
      const near = table.get(ndKey(nodes, r, b));
      if (near) return near;
    }
    const widest = [...this.placements.keys()].reduce((a, b) =>
      String(b).length > String(a).length || (String(b).length === String(a).length && b > a) ? b : a,
    );
    const rows = this.placements.get(widest)!;
    const b = Math.max(rows.bsz[0]!, Math.min(local_bsz, rows.bsz[rows.bsz.length - 1]!));
    return this.interpolatePlacement(widest, b);
  }
}

/**
 * Decimal id of the lexicographically smallest rotation of `groups` (rotations only, not
 * reflections), e.g. [2, 1, 2] -> 122 and [4, 2] -> 24. Requires 1..9 GPUs per group.
 */
export function canonicalPlacementId(groups: readonly number[]): number {
  const n = groups.length;
  let best = 0;
  for (let s = 0; s < n; s++) {
    if (s > 0) {
      let cmp = 0;
      for (let i = 0; i < n && cmp === 0; i++) cmp = groups[(s + i) % n]! - groups[(best + i) % n]!;
      if (cmp >= 0) continue;
    }
    best = s;
  }
  let id = 0;
  for (let i = 0; i < n; i++) id = id * 10 + groups[(best + i) % n]!;
  return id;
}

/**
 * Per application: the epochs and per-GPU batch limit of the Pollux artifact's runs, and the
 * parameter count of its model, counted by instantiating the benchmark models of the Pollux
 * artifact (petuum/adaptdl, branch osdi21-artifact, benchmark/models: bert-base with a QA head,
 * ResNet18, NeuMF on ml-1m, ResNet-50, 5 x GRU 800, yolov3) with the CPU build of PyTorch
 * (how: docs/policy.md).
 */
const overrides: Readonly<Record<string, AppOverrides>> = {
  bert: { max_epochs: 2, model_parameters: 109.5e6 },
  cifar10: { max_epochs: 100, model_parameters: 11.2e6 },
  ncf: { max_epochs: 10, model_parameters: 1.6e6 },
  imagenet: { max_epochs: 90, model_parameters: 25.6e6 },
  deepspeech2: { max_epochs: 80, model_parameters: 41.2e6 },
  yolov3: { max_epochs: 50, max_local_bsz: 8, model_parameters: 61.6e6 },
};

/** Names of the applications with shipped traces. */
export const applicationNames: readonly string[] = Object.keys(overrides);

const loaded = new Map<string, TraceApplication>();

/**
 * The application model `name` over the traces shipped in data/pollux/traces (loaded once per
 * process), or undefined for an unknown name.
 */
export function getApplication(name: string, tracesDir: string): TraceApplication | undefined {
  const o = overrides[name];
  if (!o) return undefined;
  const key = `${tracesDir}\u0000${name}`;
  let app = loaded.get(key);
  if (!app) {
    const dir = join(tracesDir, name);
    if (!existsSync(dir)) return undefined;
    loaded.set(key, (app = new TraceApplication(name, dir, o)));
  }
  return app;
}
