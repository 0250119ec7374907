/**
 * The planner's per-type throughput models: a profile measured on one device type carried to
 * the GPU types of a specification table. Three provenances, from the best to the weakest:
 * - `measured`: the job's own fit on the type (model/job-fit.ts, as the policy fits it);
 * - `transferred`: the job measured one GPU of the type and more on another, and other profile
 *   keys measured both types: goodput/type-transfer.ts predicts its multi-GPU steps on the type
 *   from what those keys show of the type's network, and the throughput model is fitted on them;
 * - `estimated`: compute scaled by the public specifications (FP32 rate and memory bandwidth),
 *   gradient synchronization by a ring all-reduce of the model's parameters over the type's links.
 * Pure: no I/O.
 */
import type { GradSample } from '../goodput/key-profile.js';
import { stepCorrection } from '../goodput/step-correction.js';
import { transferredPerf, type OtherKey } from '../goodput/type-transfer-model.js';
import type { BatchLimits, PerfParams, ProfilePoint, StepCorrection } from '../goodput/types.js';
import {
  CPU_SPEC_LOG_INTERVAL,
  fitResidualInterval,
  type LogInterval,
  memoryResidualInterval,
  SPEC_LOG_INTERVAL,
  TRANSFER_LOG_INTERVAL,
  widen,
} from './plan-interval.js';

/** An 80% interval of a prediction and what it rests on (plan-interval.ts). */
export type { IntervalBasis } from './plan-interval.js';
import type { IntervalBasis } from './plan-interval.js';

/** One row of the GPU specification and price table (data/gpus.json). */
export interface GpuSpec {
  name: string;
  /** Substrings (case-insensitive) of a device name that mean this type; the first entry that matches wins. */
  match: readonly string[];
  fp32_tflops: number;
  fp16_tflops: number;
  memory_gib: number;
  memory_bandwidth_gbs: number;
  /** NVLink or PCIe bandwidth per GPU (GB/s). */
  intra_node_gbs: number;
  /** Network bandwidth of one node (Gbit/s). */
  inter_node_gbps: number;
  gpus_per_node: number;
  /** null: no price known (cost not predicted). */
  price_per_gpu_hour: number | null;
}

/** Memory a replica needed as its local batch grew: peak = base + per_sample x local_bsz. */
export interface MemoryProfile {
  /** `rss`: resident memory of the replica's processes (CPU); `allocator`: the GPU allocator's peak. */
  source: 'rss' | 'allocator';
  base_bytes: number;
  per_sample_bytes: number;
  /** Memory one replica may use on the measured device (bytes). */
  device_bytes: number;
  /** Largest local batch that fits in `device_bytes` by the fit (at least 0). */
  max_local_bsz_fit: number;
  /** The measured peaks. */
  samples: readonly { local_bsz: number; peak_bytes: number }[];
}

/** What `goodput profile` measured of one key on one device type. */
export interface DeviceProfile {
  gpu_type: string;
  points: readonly ProfilePoint[];
  grad: readonly GradSample[];
  limits: BatchLimits | null;
  model_parameters?: number;
  memory?: MemoryProfile;
  /** What could not be measured, in words. */
  notes: readonly string[];
}

/** Where a prediction comes from. */
export type Provenance = 'measured' | 'transferred' | 'estimated';

/** A throughput model of the job on one GPU type. */
export interface TypeModel {
  spec: GpuSpec;
  source: Provenance;
  /** How it was obtained, in words. */
  how: string;
  perf: PerfParams;
  correction?: StepCorrection;
  /** Shapes `n:r` measured on this type (their predictions are `measured`). */
  measured_shapes: readonly string[];
  /**
   * Memory per replica at a local batch (bytes), where it was measured (`rss`: a CPU's resident
   * memory, which says nothing of a GPU's) and its fit's 80% interval; undefined when not measured.
   */
  memory?: { base_bytes: number; per_sample_bytes: number; source: MemoryProfile['source']; interval: LogInterval };
  /** The 80% interval of a prediction at a measured shape. */
  interval: IntervalBasis;
  /** The 80% interval of a prediction at any other shape. */
  unmeasured_interval: IntervalBasis;
}

/** Whether a spec is the nominal CPU-slot entry (data/gpus.json): never priced, recommended or extrapolated as a GPU. */
export function isCpuSpec(spec: GpuSpec): boolean {
  return spec.name.toLowerCase() === 'cpu';
}

function memoryOf(memory: MemoryProfile): NonNullable<TypeModel['memory']> {
  return {
    base_bytes: memory.base_bytes,
    per_sample_bytes: memory.per_sample_bytes,
    source: memory.source,
    interval: memoryResidualInterval(memory, memory.samples),
  };
}

const GIB = 1024 ** 3;
/** Latency of one all-reduce hop (s): a few microseconds on NVLink, tens over a network. */
const INTRA_HOP_S = 10e-6;
const INTER_HOP_S = 50e-6;
/** Bytes per gradient element (FP32 gradients). */
const GRAD_BYTES = 4;

/** The spec of a device type name (first `match` substring found, case-insensitive). */
export function specFor(specs: readonly GpuSpec[], gpu_type: string): GpuSpec | undefined {
  const name = gpu_type.toLowerCase();
  return (
    specs.find((s) => s.name.toLowerCase() === name) ??
    specs.find((s) => s.match.some((m) => name.includes(m.toLowerCase())))
  );
}

/** Memory a replica of `spec` has (bytes). */
export function deviceBytes(spec: GpuSpec): number {
  return spec.memory_gib * GIB;
}

/**
 * Ratio of a sample's compute time on `to` over `from` by the specifications: the geometric mean of
 * the FP32 rate ratio and the memory bandwidth ratio (training kernels sit between compute-bound
 * and bandwidth-bound).
 */
export function specComputeRatio(from: GpuSpec, to: GpuSpec): number {
  return Math.sqrt((from.fp32_tflops / to.fp32_tflops) * (from.memory_bandwidth_gbs / to.memory_bandwidth_gbs));
}

/**
 * Sync terms of a ring all-reduce of `model_parameters` FP32 gradients: 2 (r-1)/r of the gradient
 * crosses each link, about twice the gradient for r > 2 (alpha), plus a hop latency per extra
 * replica (beta); intra-node over NVLink/PCIe, inter-node over the node's network.
 */
export function ringSyncTerms(
  spec: GpuSpec,
  model_parameters: number,
): Pick<PerfParams, 'alpha_r' | 'beta_r' | 'alpha_n' | 'beta_n'> {
  const bytes = model_parameters * GRAD_BYTES;
  return {
    alpha_r: (2 * bytes) / (spec.intra_node_gbs * 1e9),
    beta_r: INTRA_HOP_S,
    alpha_n: (2 * bytes) / ((spec.inter_node_gbps / 8) * 1e9),
    beta_n: INTER_HOP_S,
  };
}

/** The model of the type a profile was measured on, its unmeasured links from the specifications. */
export function measuredModel(profile: DeviceProfile, spec: GpuSpec, perf: PerfParams): TypeModel {
  const shapes = [...new Set(profile.points.map((p) => `${p.num_nodes}:${p.num_replicas}`))];
  const intraMeasured = profile.points.some((p) => p.num_nodes === 1 && p.num_replicas > 1);
  const interMeasured = profile.points.some((p) => p.num_nodes > 1);
  let filled = perf;
  const how: string[] = [`measured at ${shapes.length} shape(s), ${profile.points.length} configuration(s)`];
  if (profile.model_parameters !== undefined && (!intraMeasured || !interMeasured)) {
    const ring = ringSyncTerms(spec, profile.model_parameters);
    filled = {
      ...perf,
      ...(intraMeasured ? {} : { alpha_r: ring.alpha_r, beta_r: ring.beta_r }),
      ...(interMeasured ? {} : { alpha_n: ring.alpha_n, beta_n: ring.beta_n }),
    };
    how.push(
      `${intraMeasured ? '' : 'intra-node and '}cross-node sync estimated from the specs (ring all-reduce of ${profile.model_parameters} parameters)`,
    );
  }
  const fit = fitResidualInterval(perf, profile.points);
  const model: TypeModel = {
    spec,
    source: 'measured',
    how: how.join('; '),
    perf: filled,
    measured_shapes: shapes,
    correction: stepCorrection(filled, profile.points),
    interval: { interval: fit, basis: "the fit's residuals on the measured points", calibrated: false },
    unmeasured_interval: {
      interval: widen(fit, TRANSFER_LOG_INTERVAL),
      basis: "the fit's residuals widened by the transfer's spread (a shape not measured)",
      calibrated: false,
    },
  };
  if (profile.memory) model.memory = memoryOf(profile.memory);
  return model;
}

/** The model on a type never measured, from the specifications (compute ratio, ring sync). */
export function estimatedModel(reference: TypeModel, spec: GpuSpec, model_parameters: number | undefined): TypeModel {
  const ratio = specComputeRatio(reference.spec, spec);
  const sync = model_parameters === undefined ? {} : ringSyncTerms(spec, model_parameters);
  // The fixed part of a step (alpha_c: the framework's per-step work on the host, kernel launches)
  // does not follow the device's arithmetic rate; the per-sample part does.
  const perf: PerfParams = { ...reference.perf, beta_c: reference.perf.beta_c * ratio, ...sync };
  const how =
    `per-sample compute x${fmtRatio(ratio)} of ${reference.spec.name} by FP32 rate and memory ` +
    `bandwidth, per-step overhead as measured; ` +
    (model_parameters === undefined
      ? 'sync as measured on ' + reference.spec.name + ' (no parameter count)'
      : 'sync from a ring all-reduce over its links');
  const fromCpu = isCpuSpec(reference.spec);
  const interval: IntervalBasis = fromCpu
    ? {
        interval: CPU_SPEC_LOG_INTERVAL,
        basis: 'a CPU profile carried by the nominal cpu entry: an order of magnitude, not calibrated',
        calibrated: false,
      }
    : {
        interval: widen(reference.unmeasured_interval.interval, SPEC_LOG_INTERVAL),
        basis: 'the specifications alone: x0.5-x2 more than the measured type, not calibrated',
        calibrated: false,
      };
  const model: TypeModel = {
    spec,
    source: 'estimated',
    how,
    perf,
    measured_shapes: [],
    interval,
    unmeasured_interval: interval,
  };
  if (reference.memory) model.memory = reference.memory;
  if (reference.correction) model.correction = { compute: reference.correction.compute, shapes: [] };
  return model;
}

/**
 * The model on a type where the job measured one GPU only, by goodput/type-transfer-model.ts from
 * other keys measured on both types: its multi-GPU step times are predicted at the reference's
 * measured shapes and batches, and the throughput model is fitted on those. Undefined when the
 * transfer cannot predict (no other key with multi-GPU rows on both types, or no one-GPU rows).
 */
export function transferredModel(
  reference: DeviceProfile,
  oneGpu: DeviceProfile,
  others: readonly OtherKey[],
  spec: GpuSpec,
): TypeModel | undefined {
  const t = transferredPerf(
    reference.points,
    oneGpu.points.filter((p) => p.num_replicas === 1),
    others,
    reference.points,
  );
  if (!t) return undefined;
  const fit = fitResidualInterval(
    t.perf,
    oneGpu.points.filter((p) => p.num_replicas === 1),
  );
  const model: TypeModel = {
    spec,
    source: 'transferred',
    perf: t.perf,
    correction: t.correction,
    measured_shapes: ['1:1'],
    interval: { interval: fit, basis: "the fit's residuals on the measured one-GPU points", calibrated: false },
    unmeasured_interval: {
      interval: TRANSFER_LOG_INTERVAL,
      basis: "the transfer's errors across GPU types (bench:plan)",
      calibrated: true,
    },
    how: `one GPU measured; multi-GPU steps transferred from ${reference.gpu_type} with what ${t.num_keys} other key(s) measured on both types`,
  };
  const memory = oneGpu.memory ?? reference.memory;
  if (memory) model.memory = memoryOf(memory);
  return model;
}

function fmtRatio(x: number): string {
  return x >= 10 || x < 0.1 ? x.toPrecision(2) : x.toFixed(2);
}
