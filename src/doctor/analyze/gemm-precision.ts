/**
 * Time in matrix-multiply and convolution kernels by math precision, recognised from kernel names
 * (cuBLAS/cuDNN/CUTLASS naming): FP32 on CUDA cores (`volta_sgemm`, `scudnn`), TF32 tensor cores
 * (`s1688gemm`, `tf32`), FP16/BF16 tensor cores (`h884`, `h1688`, `bf16`, `hmma`).
 */
export interface GemmPrecision {
  readonly matmul_us: number;
  readonly fp32_simt_us: number;
  readonly tf32_tensor_core_us: number;
  readonly half_tensor_core_us: number;
  /** Up to five FP32 CUDA-core kernel names, largest first (evidence). */
  readonly fp32_examples: readonly string[];
}

const MATMUL =
  /gemm|gemv|scudnn|hcudnn|cudnn.*conv|convolve|implicit_?gemm|xmma|cutlass|cublas|wgrad|dgrad|fprop|winograd/i;
const HALF_TC =
  /h884|h1688|h16816|hmma|bf16|bfloat16|f16f16|fp16|_h\d{3,5}gemm|half|c10::Half|__half|hcudnn|f8|fp8|e4m3/i;
const TF32_TC = /s1688|s16816|s884|tf32|tensorop_s|3xtf32/i;
const FP32_SIMT =
  /sgemm|scudnn|gemmSN|gemv2[NT]|gemmk1_kernel<float|implicit_convolve_sgemm|winograd|_engine<float|<float, float, float/i;

/** Pure. Input: total time per kernel name. */
export function gemmPrecision(kernels: readonly { name: string; time_us: number }[]): GemmPrecision {
  let matmul = 0,
    fp32 = 0,
    tf32 = 0,
    half = 0;
  const fp32Kernels: { name: string; time_us: number }[] = [];
  for (const k of kernels) {
    if (!MATMUL.test(k.name) || k.name.startsWith('nccl')) continue;
    matmul += k.time_us;
    if (HALF_TC.test(k.name)) half += k.time_us;
    else if (TF32_TC.test(k.name)) tf32 += k.time_us;
    else if (FP32_SIMT.test(k.name)) {
      fp32 += k.time_us;
      fp32Kernels.push(k);
    }
  }
  fp32Kernels.sort((a, b) => b.time_us - a.time_us);
  return {
    matmul_us: matmul,
    fp32_simt_us: fp32,
    tf32_tensor_core_us: tf32,
    half_tensor_core_us: half,
    fp32_examples: fp32Kernels.slice(0, 5).map((k) => (k.name.length > 100 ? k.name.slice(0, 97) + '...' : k.name)),
  };
}

/** True for GPUs with tensor cores (compute capability 7.0+, except the Turing GTX 16 series). */
export function hasTensorCores(computeMajor: number | undefined, name: string | undefined): boolean {
  if (name && /GTX 16|MI\d{3}|Radeon/i.test(name)) return /MI(1|2|3)\d{2}/i.test(name);
  if (computeMajor !== undefined) return computeMajor >= 7;
  return !!name && /V100|T4|A100|A10|A30|A40|H100|H200|L4|L40|RTX|B200|GB200/i.test(name);
}
