import type { TraceRankAnalysis } from '../analyze/trace-rank.js';
import { hasTensorCores } from '../analyze/gemm-precision.js';
import type { Finding } from './finding.js';
import { fmtPct, fmtUs } from './finding.js';

const DATALOADER_FIX = [
  'DataLoader(dataset, batch_size=..., num_workers=<CPU cores per GPU, e.g. 8>, pin_memory=True, persistent_workers=True, prefetch_factor=2)',
  'Copy batches asynchronously: batch = batch.to("cuda", non_blocking=True)',
  'Move heavy decoding/augmentation off the training process (more workers, NVIDIA DALI for images/video) and keep datasets on local NVMe',
  'Avoid host syncs in the step (loss.item(), tensor.cpu(), print of CUDA tensors): log every N steps instead',
];

/** The busiest stream of a rank (by number of kept GPU activities in its queue statistics). */
function mainStream(r: TraceRankAnalysis) {
  const q = [...r.queue_length].sort((a, b) => b.count - a.count)[0];
  const idle = q ? r.idle_by_stream.find((s) => s.stream === q.stream) : r.idle_by_stream[0];
  return { q, idle };
}

function idleCauseFindings(r: TraceRankAnalysis, out: Finding[]): void {
  const t = r.temporal;
  if (!t) return;
  const { q, idle } = mainStream(r);
  const idleTotal = idle ? idle.host_wait_us + idle.kernel_wait_us + idle.other_us : 0;
  const hostShare = idle && idleTotal > 0 ? idle.host_wait_us / idleTotal : 0;
  const kernelShare = idle && idleTotal > 0 ? idle.kernel_wait_us / idleTotal : 0;
  const src = r.file;
  if (t.idle_pct >= 20 && hostShare >= 0.5) {
    const evidence = [
      `rank ${r.rank}: GPU idle ${fmtPct(t.idle_pct)} of ${fmtUs(t.kernel_time_us)} (HTA temporal breakdown: compute ${fmtPct(t.compute_pct)}, non-compute ${fmtPct(t.non_compute_pct)})`,
      `stream ${idle!.stream}: ${fmtPct(hostShare * 100)} of its idle time is host wait (the next kernel was launched only after the previous one finished)`,
    ];
    if (q) evidence.push(`launch queue on stream ${q.stream}: mean ${q.mean.toFixed(2)}, median ${q.p50}, max ${q.max} outstanding operations (almost always empty: the CPU is the bottleneck)`);
    if (r.launch.rows > 0) evidence.push(`mean launch call ${r.launch.cpu_dur_mean_us.toFixed(1)} µs on the CPU vs ${r.launch.gpu_dur_mean_us.toFixed(1)} µs of GPU work per activity; ${r.launch.short_kernels} of ${r.launch.rows} activities run shorter on the GPU than their launch`);
    out.push({
      id: 'trace.gpu-waits-for-host', severity: t.idle_pct >= 50 ? 'critical' : 'warning', bottleneck: 'input-pipeline',
      title: `GPU idle ${fmtPct(t.idle_pct)} of the time waiting for the CPU (input pipeline / host-bound)`,
      evidence, impact_pct: t.idle_pct * hostShare, source: src,
      fix: [
        ...DATALOADER_FIX,
        'If the host is busy launching many small kernels rather than loading data: torch.compile(model) or CUDA graphs (torch.cuda.graphs / mode="reduce-overhead") to cut launch overhead',
        'Set OMP_NUM_THREADS / MKL_NUM_THREADS to cores-per-process so data workers and the main thread do not oversubscribe the CPU',
      ],
    });
  } else if (t.idle_pct >= 10 && kernelShare >= 0.3) {
    out.push({
      id: 'trace.launch-overhead', severity: 'warning', bottleneck: 'gpu-compute',
      title: `Kernel launch gaps: ${fmtPct(kernelShare * 100)} of idle time is short gaps between back-to-back kernels`,
      evidence: [`rank ${r.rank}: idle ${fmtPct(t.idle_pct)}; stream ${idle!.stream} kernel-wait ${fmtUs(idle!.kernel_wait_us)} (gaps < 30 µs)`, `${r.launch.short_kernels} of ${r.launch.rows} kernels run shorter than their launch call`],
      fix: ['Fuse small ops: torch.compile(model)', 'Capture the step with CUDA graphs (torch.compile(mode="reduce-overhead") or torch.cuda.CUDAGraph)', 'Use fused optimizers: torch.optim.AdamW(params, fused=True)'],
      impact_pct: t.idle_pct * kernelShare, source: src,
    });
  }
  if (t.idle_pct < 10 && q && q.mean >= 100) {
    out.push({
      id: 'trace.gpu-bound', severity: 'info', bottleneck: 'gpu-compute',
      title: `GPU-bound (good): the launch queue stays full and the GPU is busy ${fmtPct(100 - t.idle_pct)} of the time`,
      evidence: [`rank ${r.rank}: idle ${fmtPct(t.idle_pct)}, compute ${fmtPct(t.compute_pct)}`, `launch queue on stream ${q.stream}: mean ${q.mean.toFixed(1)}, median ${q.p50}, max ${q.max} outstanding operations; the CPU runs far ahead of the GPU`],
      fix: ['Speed comes from faster kernels now: mixed precision (torch.autocast + GradScaler), torch.backends.cudnn.benchmark = True for fixed shapes, channels_last memory format for CNNs, torch.compile', 'Use the memory headroom for a larger batch if convergence allows'],
      impact_pct: 0, source: src,
    });
  }
}

function precisionFinding(r: TraceRankAnalysis, out: Finding[]): void {
  const t = r.temporal;
  if (!t || r.gemm.matmul_us === 0) return;
  const tc = hasTensorCores(r.device_compute_major, r.device);
  const share = (100 * r.gemm.fp32_simt_us) / t.kernel_time_us;
  if (tc && share >= 5) {
    const ampere = (r.device_compute_major ?? 0) >= 8;
    out.push({
      id: 'trace.fp32-matmul-on-tensor-core-gpu', severity: share >= 20 ? 'critical' : 'warning', bottleneck: 'gpu-compute',
      title: `FP32 matrix math on CUDA cores: ${fmtPct(share)} of GPU time on a tensor-core GPU (${r.device ?? 'unknown GPU'})`,
      evidence: [
        `rank ${r.rank}: ${fmtUs(r.gemm.fp32_simt_us)} in FP32 GEMM/convolution kernels without tensor cores, of ${fmtUs(r.gemm.matmul_us)} matrix math`,
        `examples: ${r.gemm.fp32_examples.join(', ')}`,
      ],
      fix: [
        ampere ? 'with torch.autocast(device_type="cuda", dtype=torch.bfloat16): loss = model(x)  # BF16 needs no loss scaling' :
          'scaler = torch.cuda.amp.GradScaler(); with torch.autocast(device_type="cuda", dtype=torch.float16): loss = model(x); scaler.scale(loss).backward(); scaler.step(opt); scaler.update()',
        ...(ampere ? ['Keep FP32 parts on TF32 tensor cores: torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = True (or torch.set_float32_matmul_precision("high"))'] : []),
        'torch.backends.cudnn.benchmark = True when input shapes are fixed',
        'TensorFlow: tf.keras.mixed_precision.set_global_policy("mixed_float16")',
      ],
      impact_pct: share / 2, source: r.file,
    });
  } else if (tc && (r.device_compute_major ?? 0) >= 8 && r.gemm.tf32_tensor_core_us > 2 * r.gemm.half_tensor_core_us && (100 * r.gemm.tf32_tensor_core_us) / t.kernel_time_us >= 5) {
    const s = (100 * r.gemm.tf32_tensor_core_us) / t.kernel_time_us;
    out.push({
      id: 'trace.tf32-not-bf16', severity: 'info', bottleneck: 'gpu-compute',
      title: `Matrix math runs in TF32 (${fmtPct(s)} of GPU time); BF16 autocast would roughly double its throughput`,
      evidence: [`rank ${r.rank}: ${fmtUs(r.gemm.tf32_tensor_core_us)} TF32 vs ${fmtUs(r.gemm.half_tensor_core_us)} FP16/BF16 tensor-core time`],
      fix: ['with torch.autocast(device_type="cuda", dtype=torch.bfloat16): loss = model(x)', 'Also halves activation memory: use the headroom for larger batches'],
      impact_pct: s / 4, source: r.file,
    });
  }
}

function copyFinding(r: TraceRankAnalysis, out: Finding[]): void {
  const c = r.copies;
  const t = r.temporal;
  if (!t || c.htod_pageable_count + c.dtoh_pageable_count === 0) return;
  const us = c.htod_pageable_us + c.dtoh_pageable_us;
  out.push({
    id: 'trace.pageable-memcpy', severity: 'warning', bottleneck: 'host-device-copy',
    title: `Host-device copies from pageable memory (${c.htod_pageable_count} HtoD, ${c.dtoh_pageable_count} DtoH): synchronous and slower than pinned`,
    evidence: [
      `rank ${r.rank}: Memcpy HtoD (Pageable -> Device) ${fmtUs(c.htod_pageable_us)} in ${c.htod_pageable_count} copies; pinned HtoD ${fmtUs(c.htod_pinned_us)}`,
      `Memcpy DtoH (Device -> Pageable) ${fmtUs(c.dtoh_pageable_us)} in ${c.dtoh_pageable_count} copies (each one blocks the host until the GPU catches up)`,
    ],
    fix: [
      'DataLoader(..., pin_memory=True) and batch.to("cuda", non_blocking=True)',
      'For tensors built by hand: x = x.pin_memory(); x_gpu = x.to("cuda", non_blocking=True)',
      'Avoid per-step .item()/.cpu()/.numpy() on CUDA tensors (each is a pageable DtoH copy and a sync); accumulate metrics on the GPU and read them every N steps',
    ],
    impact_pct: Math.max(1, (100 * us) / t.kernel_time_us), source: r.file,
  });
}

function stepFinding(r: TraceRankAnalysis, out: Finding[]): void {
  const s = r.step_timing;
  if (!s || s.mean_step_us <= 0) return;
  const loaderShare = (100 * s.mean_data_loader_us) / s.mean_step_us;
  const gapShare = (100 * s.mean_gpu_gap_at_step_start_us) / s.mean_step_us;
  if (loaderShare < 10 && gapShare < 10) return;
  out.push({
    id: 'trace.step-start-gap', severity: Math.max(loaderShare, gapShare) >= 25 ? 'critical' : 'warning', bottleneck: 'input-pipeline',
    title: `Long GPU gap before each step's first kernel (${fmtPct(gapShare)} of the step); the data loader takes ${fmtPct(loaderShare)}`,
    evidence: [
      `rank ${r.rank}, ${s.steps} steps of ${fmtUs(s.mean_step_us)} on average`,
      `GPU idle from the previous step's last kernel to this step's first: ${fmtUs(s.mean_gpu_gap_at_step_start_us)} per step`,
      `enumerate(DataLoader) on the host: ${fmtUs(s.mean_data_loader_us)} per step`,
    ],
    fix: DATALOADER_FIX, impact_pct: Math.max(loaderShare, gapShare), source: r.file,
  });
}

function commFinding(r: TraceRankAnalysis, out: Finding[]): void {
  const t = r.temporal;
  if (!t || r.comm_comp_overlap_pct === null || r.comm_kernel_us === 0) return;
  const commShare = (100 * r.comm_kernel_us) / t.kernel_time_us;
  const exposed = commShare * (1 - r.comm_comp_overlap_pct / 100);
  if (commShare < 10 || r.comm_comp_overlap_pct >= 60) return;
  out.push({
    id: 'trace.unoverlapped-communication', severity: exposed >= 25 ? 'critical' : 'warning', bottleneck: 'communication',
    title: `Communication is ${fmtPct(commShare)} of GPU time and only ${fmtPct(r.comm_comp_overlap_pct)} of it overlaps computation`,
    evidence: [
      `rank ${r.rank}: NCCL kernels ${fmtUs(r.comm_kernel_us)} of ${fmtUs(t.kernel_time_us)}; HTA comm/comp overlap ${fmtPct(r.comm_comp_overlap_pct)}`,
      ...r.top_kernels.filter((k) => k.kind === 'communication').slice(0, 2).map((k) => `${k.name.split('(')[0]}: ${fmtUs(k.time_us)} in ${k.count} calls`),
    ],
    fix: [
      'DDP: DistributedDataParallel(model, bucket_cap_mb=50, gradient_as_bucket_view=True, static_graph=True) so gradient all-reduce overlaps the backward pass',
      'Gradient accumulation with model.no_sync() on the inner micro-steps: one all-reduce per N micro-batches hides a slow network',
      'Check the transport with NCCL_DEBUG=INFO (goodput doctor reads the log): cross-node traffic should be NET/IB or EFA with GDRDMA, intra-node P2P/NVLink',
      'FSDP: forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE',
    ],
    impact_pct: exposed, source: r.file,
  });
}

/** Findings from one rank's trace analysis. Pure. */
export function traceRankFindings(r: TraceRankAnalysis): Finding[] {
  const out: Finding[] = [];
  if (!r.temporal) {
    out.push({
      id: 'trace.no-gpu-activity', severity: 'info', bottleneck: 'system', title: `Trace of rank ${r.rank} has no GPU activity`,
      evidence: [`${r.file}: no kernel, memcpy or memset events`],
      fix: ['Profile with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=torch.profiler.schedule(wait=1, warmup=1, active=3))'],
      impact_pct: 0, source: r.file,
    });
    return out;
  }
  idleCauseFindings(r, out);
  precisionFinding(r, out);
  copyFinding(r, out);
  stepFinding(r, out);
  commFinding(r, out);
  return out;
}

/** Cross-rank comparison: a rank computing much longer than the others makes them wait. Pure. */
export function stragglerFindings(ranks: readonly TraceRankAnalysis[]): Finding[] {
  const withT = ranks.filter((r) => r.temporal);
  if (withT.length < 2) return [];
  const compute = withT.map((r) => r.temporal!.compute_us).sort((a, b) => a - b);
  const median = compute[Math.floor((compute.length - 1) / 2)]!;
  const slow = [...withT].sort((a, b) => b.temporal!.compute_us - a.temporal!.compute_us)[0]!;
  const excess = slow.temporal!.compute_us - median;
  if (median <= 0 || excess / median < 0.15) return [];
  return [{
    id: 'trace.straggler-rank', severity: 'warning', bottleneck: 'communication',
    title: `Rank ${slow.rank} is a straggler: ${fmtPct((100 * excess) / median)} more compute time than the median rank`,
    evidence: withT.map((r) => `rank ${r.rank}: compute ${fmtUs(r.temporal!.compute_us)}, communication kernels ${fmtUs(r.comm_kernel_us)}, idle ${fmtPct(r.temporal!.idle_pct)}`),
    fix: [
      'Balance work across ranks (equal batch sizes per rank; for embedding models, rebalance table sharding)',
      'Compare GPU clocks and throttle reasons of the slow rank (nvidia-smi -q -d PERFORMANCE,CLOCK); a throttled or shared GPU slows every collective',
      'Bind each process to the CPU socket nearest its GPU (numactl --cpunodebind=<node> --membind=<node>, or mpirun --map-by socket)',
    ],
    impact_pct: (100 * excess) / slow.temporal!.kernel_time_us, source: slow.file,
  }];
}
