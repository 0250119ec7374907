import type { TraceRankAnalysis } from '../analyze/trace-rank.js';
import { hasTensorCores } from '../analyze/gemm-precision.js';
import type { Cause } from '../analyze/attribution.js';
import { attributionFindings, severityOf } from './attribution-findings.js';
import { cpuOversubscription, THREADS_UNKNOWN } from './cpu-threads.js';
import type { Finding } from './finding.js';
import { fmtPct, fmtUs } from './finding.js';

/** The busiest stream of a rank (by number of kept GPU activities in its queue statistics). */
function mainStream(r: TraceRankAnalysis) {
  const q = [...r.queue_length].sort((a, b) => b.count - a.count)[0];
  const idle = q ? r.idle_by_stream.find((s) => s.stream === q.stream) : r.idle_by_stream[0];
  return { q, idle };
}

function precisionFinding(r: TraceRankAnalysis, out: Finding[]): void {
  const t = r.temporal;
  if (!t || r.gemm.matmul_us === 0) return;
  const tc = hasTensorCores(r.device_compute_major, r.device);
  const share = (100 * r.gemm.fp32_simt_us) / t.kernel_time_us;
  if (tc && share >= 5) {
    const ampere = (r.device_compute_major ?? 0) >= 8;
    out.push({
      id: 'trace.fp32-matmul-on-tensor-core-gpu',
      severity: share >= 20 ? 'critical' : 'warning',
      bottleneck: 'gpu-compute',
      title: `FP32 matrix math on CUDA cores: ${fmtPct(share)} of GPU time on a tensor-core GPU (${r.device ?? 'unknown GPU'})`,
      evidence: [
        `rank ${r.rank}: ${fmtUs(r.gemm.fp32_simt_us)} in FP32 GEMM/convolution kernels without ` +
          `tensor cores, of ${fmtUs(r.gemm.matmul_us)} matrix math`,
        `examples: ${r.gemm.fp32_examples.join(', ')}`,
      ],
      fix: [
        ampere
          ? 'with torch.autocast(device_type="cuda", dtype=torch.bfloat16): loss = model(x)  # BF16 needs no loss scaling'
          : 'scaler = torch.cuda.amp.GradScaler(); with torch.autocast(device_type="cuda", ' +
            'dtype=torch.float16): loss = model(x); scaler.scale(loss).backward(); scaler.step(opt); ' +
            'scaler.update()',
        ...(ampere
          ? [
              'Keep FP32 parts on TF32 tensor cores: torch.backends.cuda.matmul.allow_tf32 = True; ' +
                'torch.backends.cudnn.allow_tf32 = True (or torch.set_float32_matmul_precision("high"))',
            ]
          : []),
        'torch.backends.cudnn.benchmark = True when input shapes are fixed',
        'TensorFlow: tf.keras.mixed_precision.set_global_policy("mixed_float16")',
      ],
      impact_pct: share / 2,
      source: r.file,
    });
  } else if (
    tc &&
    (r.device_compute_major ?? 0) >= 8 &&
    r.gemm.tf32_tensor_core_us > 2 * r.gemm.half_tensor_core_us &&
    (100 * r.gemm.tf32_tensor_core_us) / t.kernel_time_us >= 5
  ) {
    const s = (100 * r.gemm.tf32_tensor_core_us) / t.kernel_time_us;
    out.push({
      id: 'trace.tf32-not-bf16',
      severity: 'info',
      bottleneck: 'gpu-compute',
      title: `Matrix math runs in TF32 (${fmtPct(s)} of GPU time); BF16 autocast would roughly double its throughput`,
      evidence: [
        `rank ${r.rank}: ${fmtUs(r.gemm.tf32_tensor_core_us)} TF32 vs ${fmtUs(r.gemm.half_tensor_core_us)} FP16/BF16 tensor-core time`,
      ],
      fix: [
        'with torch.autocast(device_type="cuda", dtype=torch.bfloat16): loss = model(x)',
        'Also halves activation memory: use the headroom for larger batches',
      ],
      impact_pct: s / 4,
      source: r.file,
    });
  }
}

function copyFinding(r: TraceRankAnalysis, out: Finding[]): void {
  const c = r.copies;
  const t = r.temporal;
  if (!t || c.htod_pageable_count + c.dtoh_pageable_count === 0) return;
  const us = c.htod_pageable_us + c.dtoh_pageable_us;
  out.push({
    id: 'trace.pageable-memcpy',
    severity: severityOf((100 * us) / t.kernel_time_us),
    bottleneck: 'host-device-copy',
    title:
      `Host-device copies from pageable memory (${c.htod_pageable_count} HtoD, ` +
      `${c.dtoh_pageable_count} DtoH): synchronous and slower than pinned`,
    evidence: [
      `rank ${r.rank}: Memcpy HtoD (Pageable -> Device) ${fmtUs(c.htod_pageable_us)} in ` +
        `${c.htod_pageable_count} copies; pinned HtoD ${fmtUs(c.htod_pinned_us)}`,
      `Memcpy DtoH (Device -> Pageable) ${fmtUs(c.dtoh_pageable_us)} in ${c.dtoh_pageable_count} ` +
        `copies (each one blocks the host until the GPU catches up)`,
    ],
    fix: [
      'DataLoader(..., pin_memory=True) and batch.to("cuda", non_blocking=True)',
      'For tensors built by hand: x = x.pin_memory(); x_gpu = x.to("cuda", non_blocking=True)',
      'Avoid per-step .item()/.cpu()/.numpy() on CUDA tensors (each is a pageable DtoH copy and ' +
        'a sync); accumulate metrics on the GPU and read them every N steps',
    ],
    impact_pct: (100 * us) / t.kernel_time_us,
    source: r.file,
  });
}

/** Evidence the attribution's causes gain from the rest of the analysis (DataLoader per step, pageable copies, NCCL kernels). */
function extraEvidence(r: TraceRankAnalysis): Partial<Record<Cause, string[]>> {
  const extra: Partial<Record<Cause, string[]>> = {};
  const s = r.step_timing;
  if (s && s.mean_step_us > 0) {
    extra['input-pipeline'] = [
      `${s.steps} steps of ${fmtUs(s.mean_step_us)}: enumerate(DataLoader) ` +
        `${fmtUs(s.mean_data_loader_us)} per step; GPU gap before each step's first kernel ` +
        `${fmtUs(s.mean_gpu_gap_at_step_start_us)}`,
    ];
  }
  const c = r.copies;
  if (c.htod_pageable_count + c.dtoh_pageable_count > 0) {
    extra['memory-copies'] = [
      `pageable copies: ${c.htod_pageable_count} HtoD (${fmtUs(c.htod_pageable_us)}), ` +
        `${c.dtoh_pageable_count} DtoH (${fmtUs(c.dtoh_pageable_us)}): synchronous and slower than ` +
        `pinned`,
    ];
  }
  if (r.comm_comp_overlap_pct !== null) {
    extra.collectives = [
      `HTA comm/comp overlap ${fmtPct(r.comm_comp_overlap_pct)}`,
      ...r.top_kernels
        .filter((k) => k.kind === 'communication')
        .slice(0, 2)
        .map((k) => `${k.name.split('(')[0]}: ${fmtUs(k.time_us)} in ${k.count} calls`),
    ];
  }
  const { idle } = mainStream(r);
  if (idle)
    extra['host-overhead'] = [
      `HTA idle breakdown, stream ${idle.stream}: host wait ${fmtUs(idle.host_wait_us)}, kernel ` +
        `wait ${fmtUs(idle.kernel_wait_us)}, other ${fmtUs(idle.other_us)}`,
    ];
  return extra;
}

/** Findings from one rank's trace analysis. Pure. */
export function traceRankFindings(r: TraceRankAnalysis): Finding[] {
  const out: Finding[] = [];
  const a = r.attribution;
  const over = r.host ? cpuOversubscription(r.host, 'trace', r.file) : null;
  if (over) out.push({ ...over, evidence: [`rank ${r.rank}: ${over.evidence[0]!} (goodput_host in the trace)`] });
  if (a) {
    const device = a.basis === 'gpu-time' ? 'gpu-compute' : 'cpu-compute';
    // Oversubscribed operators just run longer, which is what compute looks like: a CPU run is
    // called compute-bound only when its threads are known to fit its cores, else it says so.
    // On the GPU, communication is NCCL's kernels (ncclKernel*) by classification; a CPU trace's
    // collectives run on whatever backend the SDK's goodput_host names.
    const dist_backend = device === 'gpu-compute' ? 'nccl' : r.host?.dist_backend;
    const found = attributionFindings(a, 'trace', `rank ${r.rank}`, device, r.file, {
      extra: extraEvidence(r),
      ...(dist_backend ? { dist_backend } : {}),
    })
      .filter((f) => !(over && f.id === 'trace.compute-bound'))
      .map((f) =>
        f.id === 'trace.compute-bound' && device === 'cpu-compute' && !r.host
          ? { ...f, evidence: [...f.evidence, THREADS_UNKNOWN] }
          : f,
      );
    out.push(...found);
  }
  if (!r.temporal) {
    if (!a) {
      out.push({
        id: 'trace.no-gpu-activity',
        severity: 'info',
        bottleneck: 'system',
        title: `Trace of rank ${r.rank} has no GPU activity and no profiler steps`,
        evidence: [`${r.file}: no kernel, memcpy or memset events, and no operators to attribute step time to`],
        fix: [
          'Profile with torch.profiler.profile(activities=[ProfilerActivity.CPU, ' +
            'ProfilerActivity.CUDA], schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)) and ' +
            'call prof.step() every step',
        ],
        impact_pct: 0,
        source: r.file,
      });
    }
    return out;
  }
  precisionFinding(r, out);
  if (!out.some((f) => f.id === 'trace.memory-copies')) copyFinding(r, out);
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
  return [
    {
      id: 'trace.straggler-rank',
      severity: 'warning',
      bottleneck: 'communication',
      title: `Rank ${slow.rank} is a straggler: ${fmtPct((100 * excess) / median)} more compute time than the median rank`,
      evidence: withT.map(
        (r) =>
          `rank ${r.rank}: compute ${fmtUs(r.temporal!.compute_us)}, communication kernels ` +
          `${fmtUs(r.comm_kernel_us)}, idle ${fmtPct(r.temporal!.idle_pct)}`,
      ),
      fix: [
        'Balance work across ranks (equal batch sizes per rank; for embedding models, rebalance table sharding)',
        'Compare GPU clocks and throttle reasons of the slow rank (nvidia-smi -q -d ' +
          'PERFORMANCE,CLOCK); a throttled or shared GPU slows every collective',
        'Bind each process to the CPU socket nearest its GPU (numactl --cpunodebind=<node> --membind=<node>, or mpirun --map-by socket)',
      ],
      impact_pct: (100 * excess) / slow.temporal!.kernel_time_us,
      source: slow.file,
    },
  ];
}
