import { Random } from '../../src/core/random.js';

/** Shape of a generated Kineto trace (for benchmarks and memory tests). */
export interface SyntheticTraceOptions {
  readonly rank: number;
  readonly worldSize: number;
  /** Profiler steps; the last one is excluded by HTA's rules, as in real traces. */
  readonly steps: number;
  /** Kernels launched per step (each with its cudaLaunchKernel and a cpu_op parent). */
  readonly kernelsPerStep: number;
  /** Deterministic seed for durations. */
  readonly seed: number;
  /** Host time per step in `enumerate(DataLoader)` before the first launch (µs); default 300. */
  readonly dataLoaderUs?: number;
}

const KERNELS = [
  'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)',
  'ampere_sgemm_128x64_tn',
  'void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)',
  'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)',
  'Memcpy HtoD (Pageable -> Device)',
];

/**
 * Yields the text of a synthetic multi-step Kineto trace in chunks of about `chunkChars`, never
 * holding it whole (so a 500 MB trace can be written or streamed with constant memory). Pure.
 */
export function* syntheticTraceChunks(o: SyntheticTraceOptions, chunkChars = 1 << 20): Generator<string> {
  const generator = new Random(o.seed + o.rank);
  const rand = (): number => generator.next();
  let buf =
    `{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": ${o.rank}, "world_size": ${o.worldSize}},\n` +
    `"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920, "computeMajor": 8, "computeMinor": 0}],\n"traceEvents": [\n`;
  let ts = 1_700_000_000_000 + o.rank * 13;
  let corr = 1;
  let first = true;
  const emit = (s: string) => {
    buf += (first ? '' : ',\n') + s;
    first = false;
  };
  for (let step = 0; step < o.steps; step++) {
    const stepStart = ts;
    const loader = o.dataLoaderUs ?? 300;
    // Draw the step's kernels first so the ProfilerStep span can end when the host is done launching.
    const durs: number[] = [];
    const launches: number[] = [];
    for (let k = 0; k < o.kernelsPerStep; k++) {
      durs.push(Math.round(5 + rand() * 60));
      launches.push(4 + Math.round(rand() * 4));
    }
    const stepDur = loader + 10 + launches.reduce((a, b) => a + b + 3, 0) + 20;
    emit(
      `{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#${step + 1}", "pid": 1, "tid": 1, "ts": ${stepStart}, "dur": ${stepDur}, "args": {"External id": ${corr}}}`,
    );
    emit(
      `{"ph": "X", "cat": "cpu_op", "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "pid": 1, "tid": 1, "ts": ${stepStart + 1}, "dur": ${loader}, "args": {"External id": ${corr}}}`,
    );
    let host = stepStart + loader + 10;
    let gpu = host + 20;
    for (let k = 0; k < o.kernelsPerStep; k++) {
      const kind = k % 50 === 49 ? 3 : k % 97 === 0 ? 4 : k % 3;
      const dur = durs[k]!;
      const launch = launches[k]!;
      emit(
        `{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": ${host}, "dur": ${launch + 2}, "args": {"External id": ${corr}, "Sequence number": ${corr}}}`,
      );
      emit(
        `{"ph": "X", "cat": "cuda_runtime", "name": "${kind === 4 ? 'cudaMemcpyAsync' : 'cudaLaunchKernel'}", "pid": 1, "tid": 1, "ts": ${host + 1}, "dur": ${launch}, "args": {"External id": ${corr}, "cbid": 211, "correlation": ${corr}}}`,
      );
      gpu = Math.max(gpu, host + launch + 2);
      const stream = kind === 3 ? 20 : 7;
      emit(
        `{"ph": "X", "cat": "${kind === 4 ? 'gpu_memcpy' : 'kernel'}", "name": "${KERNELS[kind]!.replace(/"/g, '\\"')}", "pid": 0, "tid": ${stream}, "ts": ${gpu}, "dur": ${dur}, "args": {"External id": ${corr}, "queued": 0, "device": 0, "context": 1, "stream": ${stream}, "correlation": ${corr}, "registers per thread": 32, "grid": [128, 1, 1], "block": [256, 1, 1]}}`,
      );
      emit(`{"ph": "s", "id": ${corr}, "pid": 1, "tid": 1, "ts": ${host + 1}, "cat": "ac2g", "name": "ac2g"}`);
      if (kind !== 3) gpu += dur + 1;
      host += launch + 3;
      corr++;
      if (buf.length >= chunkChars) {
        yield buf;
        buf = '';
      }
    }
    // The host runs ahead: the next step starts when this one's launches are done, not when the GPU is.
    ts = stepStart + stepDur;
  }
  buf += '\n],\n"traceName": "synthetic", "displayTimeUnit": "ms"}\n';
  yield buf;
}
