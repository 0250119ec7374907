import { hostThreadsOf, type HostThreads } from '../step-summary.js';
import { NumberColumn, StringTable } from './columns.js';
import { KIND_CODE, kernelKind } from './kernel-kind.js';

/** A `ProfilerStep#N` annotation on the host. Times in integer microseconds (HTA rounding). */
export interface ProfilerStepMark {
  readonly iteration: number;
  readonly ts_us: number;
  readonly end_us: number;
}

/** Everything the analyses need from one rank's Kineto trace, in compact columns. */
export interface KinetoRank {
  readonly file: string;
  rank: number;
  readonly names: StringTable;
  /** GPU activities (kernels, memcpy, memset) in file order. */
  readonly gpu: {
    readonly ts: NumberColumn;
    readonly end: NumberColumn;
    readonly stream: NumberColumn;
    readonly correlation: NumberColumn;
    readonly name: NumberColumn;
    readonly kind: NumberColumn;
  };
  /** Host events that carry a correlation id (CUDA/HIP runtime and driver calls), in file order. */
  readonly host: {
    readonly ts: NumberColumn;
    readonly end: NumberColumn;
    readonly correlation: NumberColumn;
    readonly name: NumberColumn;
  };
  readonly steps: ProfilerStepMark[];
  /** Distinct `ProfilerStep...` names seen (HTA counts names, not events). */
  readonly stepNames: Set<string>;
  /** Host spans of `enumerate(DataLoader)...` ops: the training loop waiting for its next batch. */
  readonly dataLoader: { readonly ts: NumberColumn; readonly end: NumberColumn };
  /** Host operator spans (`cpu_op`, `user_annotation`), with their thread and class (CPU_CLASS), for step-time attribution. */
  readonly cpu: {
    readonly ts: NumberColumn;
    readonly end: NumberColumn;
    readonly tid: NumberColumn;
    readonly cls: NumberColumn;
  };
  /** Thread ids as they appear in the trace (numbers or strings), interned. */
  readonly tids: StringTable;
  /** True for the legacy chrome-trace form (a bare event array, events without `cat`), as torch 1.x writes it. */
  legacy: boolean;
  deviceName?: string;
  deviceComputeMajor?: number;
  deviceMemoryBytes?: number;
  worldSize?: number;
  /**
   * The host's CPU threads from the top-level `goodput_host` member (goodput.torch.export_trace
   * writes it; on Kineto builds `prof.add_metadata_json("goodput_host", ...)` does the same).
   */
  hostThreads?: HostThreads;
  /** True when `distributedInfo.rank` was present (else the rank came from the file name, or 0). */
  rankFromMetadata: boolean;
  eventCount: number;
}

interface RawEvent {
  ph?: unknown;
  cat?: unknown;
  name?: unknown;
  ts?: unknown;
  dur?: unknown;
  args?: unknown;
  tid?: unknown;
  pid?: unknown;
}

const STEP_RE = /^ProfilerStep\s*#\s*(\d+)/;

/**
 * What a host operator is, for step-time attribution. `annotation`: a script's own
 * `record_function` span (a `user_annotation` that is none of the named kinds) marks a region,
 * not work: a `train_step` span around the whole step covers the Python between its operators,
 * which is per-step overhead, not compute.
 */
export const CPU_CLASS = {
  op: 0,
  dataLoader: 1,
  sync: 2,
  collective: 3,
  optimizer: 4,
  backward: 5,
  step: 6,
  annotation: 7,
} as const;

/** Host calls that block until the device (or a peer) has caught up. */
export const SYNC_OP_RE =
  /^(aten::item|aten::_local_scalar_dense|cuda(Stream|Device|Event)Synchronize|hip(Stream|Device|Event)Synchronize|cudaMemcpy$|hipMemcpy$)/;
/** Collectives and point-to-point communication issued from the host. */
export const COLLECTIVE_OP_RE =
  /^(c10d::|gloo:|nccl:|record_param_comms)|all_?reduce|all_?gather|reduce_?scatter|broadcast|barrier|all_to_all/i;

/** Pure; the class of a host operator name. */
export function cpuClass(name: string): number {
  if (name.startsWith('ProfilerStep')) return CPU_CLASS.step;
  if (name.startsWith('enumerate(DataLoader)')) return CPU_CLASS.dataLoader;
  if (SYNC_OP_RE.test(name)) return CPU_CLASS.sync;
  if (COLLECTIVE_OP_RE.test(name)) return CPU_CLASS.collective;
  if (name.startsWith('Optimizer.')) return CPU_CLASS.optimizer;
  if (name.startsWith('autograd::engine::evaluate_function')) return CPU_CLASS.backward;
  return CPU_CLASS.op;
}
const HOST_ONLY_CATS = new Set([
  'cuda_runtime',
  'cuda_driver',
  'cpu_op',
  'user_annotation',
  'python_function',
  'gpu_user_annotation',
]);

/** Creates an empty rank record for `file`; `rank` defaults to 0 until metadata says otherwise. */
export function newKinetoRank(file: string): KinetoRank {
  const c = () => new NumberColumn();
  return {
    file,
    rank: 0,
    names: new StringTable(),
    gpu: { ts: c(), end: c(), stream: c(), correlation: c(), name: c(), kind: c() },
    host: { ts: c(), end: c(), correlation: c(), name: c() },
    steps: [],
    stepNames: new Set(),
    dataLoader: { ts: c(), end: c() },
    eventCount: 0,
    rankFromMetadata: false,
    cpu: { ts: c(), end: c(), tid: c(), cls: c() },
    tids: new StringTable(),
    legacy: false,
  };
}

/**
 * Adds one trace event. Follows HTA's parser: events without `dur` or `cat`, and `Trace` spans, are
 * dropped; fractional (ns-resolution) times are rounded inward, `ts = ceil(ts)`, `end = floor(ts + dur)`,
 * which HTA does to avoid false overlaps (pytorch/pytorch#122425).
 */
export function addKinetoEvent(r: KinetoRank, ev: unknown): void {
  if (ev === null || typeof ev !== 'object') return;
  const e = ev as RawEvent;
  r.eventCount++;
  // The legacy (torch 1.x) chrome trace has no categories: its complete events are host operators
  // (process "CPU functions"), also when someone wrapped the array in {"traceEvents": ...}.
  if (e.cat === undefined && e.pid === 'CPU functions') r.legacy = true;
  const cat = typeof e.cat === 'string' ? e.cat : r.legacy && e.ph === 'X' ? 'cpu_op' : undefined;
  if (cat === undefined || typeof e.dur !== 'number' || typeof e.ts !== 'number' || cat === 'Trace') return;
  const name = typeof e.name === 'string' ? e.name : String(e.name ?? '');
  const ts = Math.ceil(e.ts);
  const end = Math.floor(e.ts + e.dur);
  const args = (e.args !== null && typeof e.args === 'object' ? e.args : {}) as Record<string, unknown>;
  const stream = args['stream'];
  const correlation = typeof args['correlation'] === 'number' ? (args['correlation'] as number) : -1;
  if (typeof stream === 'number' && stream >= 0 && !HOST_ONLY_CATS.has(cat)) {
    r.gpu.ts.push(ts);
    r.gpu.end.push(end);
    r.gpu.stream.push(stream);
    r.gpu.correlation.push(correlation);
    r.gpu.name.push(r.names.id(name));
    r.gpu.kind.push(KIND_CODE[kernelKind(name)]);
    return;
  }
  if (correlation >= 0) {
    r.host.ts.push(ts);
    r.host.end.push(end);
    r.host.correlation.push(correlation);
    r.host.name.push(r.names.id(name));
  }
  if (cat === 'cpu_op' || cat === 'user_annotation' || (cat === 'cuda_runtime' && SYNC_OP_RE.test(name))) {
    const cls = cpuClass(name);
    // Legacy traces (torch 1.x) have no categories: a span named like no operator (no `::`, not a
    // `...Backward` node) is the script's record_function.
    const annotation = cat === 'user_annotation' || (r.legacy && !name.includes('::') && !/Backward\d*$/.test(name));
    const kind = annotation && cls === CPU_CLASS.op ? CPU_CLASS.annotation : cls;
    addCpuSpan(r, ts, end, r.tids.id(String(e.tid ?? '')), kind);
  }
  if (name.startsWith('ProfilerStep')) {
    r.stepNames.add(name);
    const m = STEP_RE.exec(name);
    if (m) r.steps.push({ iteration: Number(m[1]), ts_us: ts, end_us: end });
  } else if ((cat === 'cpu_op' || cat === 'user_annotation') && name.startsWith('enumerate(DataLoader)')) {
    r.dataLoader.ts.push(ts);
    r.dataLoader.end.push(end);
  }
}

/** Index of the last plain-operator span per thread, to fold nested operators into it. */
const lastOpByRank = new WeakMap<KinetoRank, Map<number, number>>();

/**
 * Keeps a host span. Plain operators nested in (or touching) the thread's previous plain operator
 * only extend it: the attribution needs their union, and memory then grows with top-level
 * operators, not with every nested aten call.
 */
function addCpuSpan(r: KinetoRank, ts: number, end: number, tid: number, cls: number): void {
  let last = lastOpByRank.get(r);
  if (!last) lastOpByRank.set(r, (last = new Map()));
  if (cls === CPU_CLASS.op) {
    const i = last.get(tid);
    if (i !== undefined && ts >= r.cpu.ts.get(i) && ts <= r.cpu.end.get(i)) {
      if (end > r.cpu.end.get(i)) r.cpu.end.set(i, end);
      return;
    }
    last.set(tid, r.cpu.ts.length);
  }
  r.cpu.ts.push(ts);
  r.cpu.end.push(end);
  r.cpu.tid.push(tid);
  r.cpu.cls.push(cls);
}

/** A `goodput_host` value (an object, or the JSON string add_metadata_json stores) when well-formed. */
function goodputHostOf(value: unknown): HostThreads | undefined {
  if (typeof value !== 'string') return hostThreadsOf(value);
  try {
    return hostThreadsOf(JSON.parse(value));
  } catch {
    return undefined;
  }
}

/** Applies a top-level trace member (`distributedInfo`, `deviceProperties`, `goodput_host`) to the rank record. */
export function addKinetoMember(r: KinetoRank, key: string, value: unknown): void {
  if (key === 'goodput_host') {
    const h = goodputHostOf(value);
    if (h) r.hostThreads = h;
  } else if (key === 'distributedInfo' && value && typeof value === 'object') {
    const d = value as Record<string, unknown>;
    if (typeof d['rank'] === 'number') {
      r.rank = d['rank'];
      r.rankFromMetadata = true;
    }
    if (typeof d['world_size'] === 'number') r.worldSize = d['world_size'];
  } else if (key === 'deviceProperties' && Array.isArray(value) && value.length > 0) {
    const d = value[0] as Record<string, unknown>;
    if (typeof d['name'] === 'string') r.deviceName = d['name'];
    if (typeof d['computeMajor'] === 'number') r.deviceComputeMajor = d['computeMajor'];
    if (typeof d['totalGlobalMem'] === 'number') r.deviceMemoryBytes = d['totalGlobalMem'];
  }
}
