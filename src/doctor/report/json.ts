import { idleRatio } from '../analyze/hta/launch.js';
import type { DoctorReport } from './model.js';

/** Replaces NaN/Infinity by null so the JSON stays valid and explicit. */
function finite(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/**
 * The `--json` document: one object with `verdict`, `runs` (a verdict per run), `traces` (per rank), `kernel_types`, `gpus`,
 * `topology`, `nccl` (null without a log), `horovod`, `steps`, `findings`, `inputs`, `warnings`.
 * Pure; field names carry units.
 */
export function toJson(r: DoctorReport): Record<string, unknown> {
  const transports: Record<string, number> = {};
  for (const n of r.nccl) for (const [k, v] of Object.entries(n.transports)) transports[k] = (transports[k] ?? 0) + v;
  const withTable = [...r.nccl].reverse().find((n) => n.avg_bus_bandwidth_gbps !== null);
  return {
    verdict: r.verdict,
    runs: r.runs,
    inputs: r.inputs,
    warnings: r.warnings,
    traces: r.traces.map((t) => ({
      rank: t.rank,
      file: t.file,
      device: t.device ?? null,
      iterations: t.iterations,
      gpu_events: t.gpu_events,
      temporal: t.temporal
        ? {
            idle_us: t.temporal.idle_us,
            compute_us: t.temporal.compute_us,
            non_compute_us: t.temporal.non_compute_us,
            kernel_time_us: t.temporal.kernel_time_us,
            idle_pct: t.temporal.idle_pct,
            compute_pct: t.temporal.compute_pct,
            non_compute_pct: t.temporal.non_compute_pct,
          }
        : null,
      comm_comp_overlap_pct: t.comm_comp_overlap_pct,
      idle_breakdown: t.idle_by_stream.map((s) => ({
        stream: s.stream,
        host_wait_us: s.host_wait_us,
        kernel_wait_us: s.kernel_wait_us,
        other_us: s.other_us,
        host_wait_ratio: finite(idleRatio(s, 'host_wait')),
        kernel_wait_ratio: finite(idleRatio(s, 'kernel_wait')),
        other_ratio: finite(idleRatio(s, 'other')),
      })),
      launch_stats: {
        rows: t.launch.rows,
        cpu_dur_mean_us: finite(t.launch.cpu_dur_mean_us),
        gpu_dur_mean_us: finite(t.launch.gpu_dur_mean_us),
        launch_delay_mean_us: finite(t.launch.launch_delay_mean_us),
        short_kernels: t.launch.short_kernels,
      },
      queue_length: t.queue_length.map((q) => ({ ...q, std: finite(q.std) })),
      copies: t.copies,
      gemm: t.gemm,
      step_timing: t.step_timing ?? null,
      attribution: t.attribution ?? null,
      top_kernels: t.top_kernels,
    })),
    kernel_types: r.kernel_types,
    gpus: r.gpus.map((g) => ({
      name: g.name,
      index: g.index,
      utilization_gpu_pct: g.utilization_gpu_pct,
      utilization_memory_pct: g.utilization_memory_pct,
      memory_used_bytes: g.memory_used_bytes,
      memory_total_bytes: g.memory_total_bytes,
      power_draw_w: g.power_draw_w,
      power_limit_w: g.power_limit_w,
      temperature_gpu_c: g.temperature_gpu_c,
      clocks_sm_mhz: g.clocks_sm_mhz,
      persistence_mode: g.persistence_mode,
      samples: g.samples,
      source: g.source,
    })),
    topology: r.topology,
    nccl:
      r.nccl.length === 0
        ? null
        : {
            transports,
            avg_bus_bandwidth_gbps: withTable?.avg_bus_bandwidth_gbps ?? null,
            peak_bus_bandwidth_gbps: withTable?.peak_bus_bandwidth_gbps ?? null,
            logs: r.nccl,
          },
    horovod: r.horovod,
    steps: r.steps,
    findings: r.findings.map((f) => ({
      id: f.id,
      severity: f.severity,
      bottleneck: f.bottleneck,
      title: f.title,
      evidence: f.evidence,
      fix: f.fix,
      impact_pct: Math.round(f.impact_pct * 10) / 10,
      source: f.source,
    })),
  };
}
