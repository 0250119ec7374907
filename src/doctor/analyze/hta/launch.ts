import type { PreparedRank } from './prepare.js';
import { roundHalfEven } from './breakdown.js';
import { numpyArgsort } from './numpy-argsort.js';

/** HTA's default gap (µs) under which a non-host-wait gap counts as kernel-launch overhead. */
export const CONSECUTIVE_KERNEL_DELAY_US = 30;

/** Idle time of one stream split by cause, as HTA `get_idle_time_breakdown`. */
export interface StreamIdle {
  readonly stream: number;
  /** The GPU waited for the host to enqueue work (the launch came after the previous kernel ended). */
  readonly host_wait_us: number;
  /** Short gaps (< 30 µs) between back-to-back kernels: launch overhead. */
  readonly kernel_wait_us: number;
  readonly other_us: number;
  /** Categories that occurred on this stream (HTA prints only those). */
  readonly categories: readonly ('host_wait' | 'kernel_wait' | 'other')[];
}

/** Pure; streams in order of first appearance. */
export function idleBreakdown(p: PreparedRank): StreamIdle[] {
  const g = p.source.gpu;
  const ts = g.ts.view();
  const end = g.end.view();
  const stream = g.stream.view();
  const corr = g.correlation.view();
  const hostTs = p.source.host.ts.view();
  const byStream = new Map<number, number[]>();
  for (const i of p.kept) {
    const s = stream[i]!;
    let list = byStream.get(s);
    if (!list) byStream.set(s, (list = []));
    list.push(i);
  }
  const out: StreamIdle[] = [];
  for (const [s, list] of byStream) {
    let host = 0,
      kernel = 0,
      other = 0;
    const seen = new Set<'host_wait' | 'kernel_wait' | 'other'>();
    for (let k = 0; k < list.length; k++) {
      const i = list[k]!;
      if (k === 0) {
        seen.add('other');
        continue;
      }
      const prevEnd = end[list[k - 1]!]!;
      const gap = ts[i]! - prevEnd;
      const h = p.hostByCorrelation.get(corr[i]!);
      if (h !== undefined && hostTs[h]! > prevEnd) {
        host += gap;
        seen.add('host_wait');
      } else if (gap < CONSECUTIVE_KERNEL_DELAY_US) {
        kernel += gap;
        seen.add('kernel_wait');
      } else {
        other += gap;
        seen.add('other');
      }
    }
    const order = (['host_wait', 'kernel_wait', 'other'] as const).filter((c) => seen.has(c));
    out.push({ stream: s, host_wait_us: host, kernel_wait_us: kernel, other_us: other, categories: order });
  }
  return out;
}

/** Ratio of one idle category to the stream's total idle time, rounded to 2 decimals (NaN when 0/0). */
export function idleRatio(s: StreamIdle, category: 'host_wait' | 'kernel_wait' | 'other'): number {
  const total = s.host_wait_us + s.kernel_wait_us + s.other_us;
  const v = category === 'host_wait' ? s.host_wait_us : category === 'kernel_wait' ? s.kernel_wait_us : s.other_us;
  return roundHalfEven(v / total, 2);
}

/** Host calls HTA's launch statistics pair with GPU activities. */
const LAUNCH_STATS_CALLS = new Set(['cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync']);
/** Host calls that enqueue work on a stream, for the queue length (CUDA and HIP spellings). */
const ENQUEUE_CALLS = new Set([
  'cudaLaunchKernel',
  'cudaLaunchKernelExC',
  'cudaMemcpyAsync',
  'cudaMemsetAsync',
  'cuLaunchKernel',
  'cuLaunchKernelEx',
  'hipLaunchKernel',
  'hipExtLaunchKernel',
  'hipExtModuleLaunchKernel',
  'hipModuleLaunchKernel',
  'hipMemcpyAsync',
  'hipMemcpyWithStream',
  'hipMemsetAsync',
]);

/** HTA `get_cuda_kernel_launch_stats` summary for one rank (µs). */
export interface LaunchStats {
  readonly rows: number;
  readonly cpu_dur_mean_us: number;
  readonly gpu_dur_mean_us: number;
  readonly launch_delay_mean_us: number;
  /** Activities that ran shorter on the GPU than their launch call took on the CPU. */
  readonly short_kernels: number;
}

/**
 * Pairs each launch call (cudaLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync) with its GPU activity.
 * Launch delay is the gap from the end of the call to the start on the GPU, floored at 0. Pure.
 */
export function launchStats(p: PreparedRank): LaunchStats {
  const g = p.source.gpu;
  const h = p.source.host;
  const names = p.source.names;
  let rows = 0,
    cpu = 0,
    gpu = 0,
    delay = 0,
    short = 0;
  for (const i of p.kept) {
    const hi = p.hostByCorrelation.get(g.correlation.get(i));
    if (hi === undefined || !LAUNCH_STATS_CALLS.has(names.name(h.name.get(hi)))) continue;
    const cpuDur = h.end.get(hi) - h.ts.get(hi);
    const gpuDur = g.end.get(i) - g.ts.get(i);
    rows++;
    cpu += cpuDur;
    gpu += gpuDur;
    delay += Math.max(0, g.ts.get(i) - h.end.get(hi));
    if (gpuDur < cpuDur) short++;
  }
  return {
    rows,
    cpu_dur_mean_us: cpu / rows,
    gpu_dur_mean_us: gpu / rows,
    launch_delay_mean_us: delay / rows,
    short_kernels: short,
  };
}

/** Summary of the per-stream launch queue length (outstanding enqueued operations), pandas `describe`. */
export interface QueueLengthSummary {
  readonly stream: number;
  readonly count: number;
  readonly mean: number;
  readonly std: number;
  readonly min: number;
  readonly p25: number;
  readonly p50: number;
  readonly p75: number;
  readonly max: number;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * HTA queue length: +1 when a host call enqueues an activity on a stream, -1 when the activity
 * starts on the GPU; statistics over every change point. Pure.
 */
export function queueLength(p: PreparedRank): QueueLengthSummary[] {
  const g = p.source.gpu;
  const h = p.source.host;
  const names = p.source.names;
  const pairs: [number, number][] = [];
  for (const i of p.kept) {
    const hi = p.hostByCorrelation.get(g.correlation.get(i));
    if (hi === undefined || !ENQUEUE_CALLS.has(names.name(h.name.get(hi)))) continue;
    pairs.push([hi, i]);
  }
  // HTA concatenates the host calls (in trace order) before the GPU activities (in trace order),
  // then sorts by time with NumPy's unstable quicksort; replay that to get the same tie order.
  const n = pairs.length;
  const t = new Float64Array(2 * n);
  const delta = new Int8Array(2 * n);
  const streamOf = new Float64Array(2 * n);
  const byHost = [...pairs].sort((a, b) => a[0] - b[0]);
  const byGpu = [...pairs].sort((a, b) => a[1] - b[1]);
  byHost.forEach(([hi, i], k) => {
    t[k] = h.ts.get(hi);
    delta[k] = 1;
    streamOf[k] = g.stream.get(i);
  });
  byGpu.forEach(([, i], k) => {
    t[n + k] = g.ts.get(i);
    delta[n + k] = -1;
    streamOf[n + k] = g.stream.get(i);
  });
  const points = new Map<number, number[]>();
  for (const k of numpyArgsort(t)) {
    const s = streamOf[k]!;
    let list = points.get(s);
    if (!list) points.set(s, (list = []));
    list.push(delta[k]!);
  }
  const out: QueueLengthSummary[] = [];
  for (const [stream, list] of [...points.entries()].sort((a, b) => a[0] - b[0])) {
    const values: number[] = [];
    let q = 0;
    for (const d of list) values.push((q += d));
    const n = values.length;
    const mean = values.reduce((s, v) => s + v, 0) / n;
    const std = n > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1)) : NaN;
    const sorted = [...values].sort((a, b) => a - b);
    out.push({
      stream,
      count: n,
      mean,
      std,
      min: sorted[0]!,
      p25: quantile(sorted, 0.25),
      p50: quantile(sorted, 0.5),
      p75: quantile(sorted, 0.75),
      max: sorted[n - 1]!,
    });
  }
  return out;
}
