import { fmtUs } from '../findings/finding.js';
import type { DoctorReport } from './model.js';
import { BOTTLENECK_TEXT } from './model.js';

const GiB = 1024 ** 3;

function fixed(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);
}

/** The terminal report: verdict, findings ranked by estimated impact (evidence + fix), then the measured tables. Pure. */
export function renderText(r: DoctorReport): string {
  const out: string[] = [];
  if (r.inputs.length === 0) {
    out.push('goodput doctor: no usable input (nothing could be analysed; see the warnings above)');
    return out.join('\n') + '\n';
  }
  const issues = r.findings.filter((f) => f.severity !== 'info');
  const notes = r.findings.filter((f) => f.severity === 'info');
  out.push(`goodput doctor: ${r.inputs.length} input(s) analysed`);
  out.push(
    `Limiting resource: ${BOTTLENECK_TEXT[r.verdict]} (${issues.length} issue(s) to fix, ranked by estimated impact; ${notes.length} note(s))`,
  );
  if (r.runs.length > 1) {
    out.push('', `Runs (${r.runs.length}), each with its own verdict:`);
    for (const run of r.runs)
      out.push(
        `  ${run.run}: ${BOTTLENECK_TEXT[run.verdict]}${run.first_finding ? ` (first finding: ${run.first_finding})` : ''}`,
      );
  }
  out.push('');
  const finding = (f: DoctorReport['findings'][number], label: string): void => {
    out.push(`${label} [${f.severity.toUpperCase()}] ${f.title}`);
    out.push(
      `   id: ${f.id}   area: ${BOTTLENECK_TEXT[f.bottleneck]}   est. impact: ${f.impact_pct.toFixed(1)}% of run time   from: ${f.source}`,
    );
    for (const e of f.evidence) out.push(`   evidence: ${e}`);
    for (const x of f.fix) out.push(`   fix: ${x}`);
    out.push('');
  };
  issues.forEach((f, i) => finding(f, `${i + 1}.`));
  if (notes.length) out.push(`Notes (${notes.length}):`, '');
  notes.forEach((f) => finding(f, '-'));
  const attributed = r.traces.filter((t) => t.attribution);
  if (attributed.length) {
    out.push('Time by cause (shares add up to 100%)');
    for (const t of attributed) {
      const a = t.attribution!;
      out.push(
        `  rank ${t.rank} (${a.basis === 'gpu-time' ? 'GPU time' : 'step time'} ` +
          `${fmtUs(a.total_us)}): ` +
          `${a.causes.map((c) => `${c.cause} ${c.pct.toFixed(2)}%`).join(', ')}`,
      );
    }
    out.push('');
  }
  if (r.traces.length) {
    out.push('PyTorch traces (HTA definitions; times in µs)');
    out.push('  rank  kernel_time     idle%  compute%  non-compute%  comm/comp overlap%  steps');
    for (const t of r.traces) {
      const tb = t.temporal;
      out.push(
        `  ${String(t.rank).padStart(4)}  ${String(tb?.kernel_time_us ?? '-').padStart(11)}  ` +
          `${fixed(tb?.idle_pct, 2).padStart(8)}  ${fixed(tb?.compute_pct, 2).padStart(8)}  ` +
          `${fixed(tb?.non_compute_pct, 2).padStart(12)}  ` +
          `${fixed(t.comm_comp_overlap_pct, 2).padStart(18)}  ${t.iterations.join(',')}`,
      );
    }
    for (const t of r.traces) {
      for (const s of t.idle_by_stream)
        out.push(
          `  rank ${t.rank} stream ${s.stream} idle: host wait ${fmtUs(s.host_wait_us)}, kernel wait ` +
            `${fmtUs(s.kernel_wait_us)}, other ${fmtUs(s.other_us)}`,
        );
      for (const q of t.queue_length)
        out.push(
          `  rank ${t.rank} stream ${q.stream} launch queue: mean ${q.mean.toFixed(3)}, median ${q.p50}, max ${q.max} (${q.count} changes)`,
        );
      if (t.launch.rows)
        out.push(
          `  rank ${t.rank} launches: ${t.launch.rows}, CPU ${t.launch.cpu_dur_mean_us.toFixed(3)} ` +
            `µs, GPU ${t.launch.gpu_dur_mean_us.toFixed(3)} µs, delay ` +
            `${t.launch.launch_delay_mean_us.toFixed(3)} µs (means)`,
        );
    }
    for (const run of r.kernel_types) {
      out.push(`  kernel types of ${run.run} (ranks ${run.ranks.join(', ')}):`);
      for (const k of run.rows)
        out.push(`    ${k.kernel_type.padEnd(56)} ${String(k.time_us).padStart(10)} µs  ${k.pct.toFixed(1)}%`);
    }
    out.push('');
  }
  if (r.gpus.length) {
    out.push('GPUs (nvidia-smi, latest reading)');
    for (const g of r.gpus) {
      const mem = g.memory_total_bytes
        ? `${fixed((g.memory_used_bytes ?? 0) / GiB)} / ${fixed(g.memory_total_bytes / GiB)} GiB`
        : '-';
      out.push(
        `  ${g.name ?? 'GPU'} #${g.index ?? '?'}: util ${g.utilization_gpu_pct ?? '-'}%, memory ` +
          `${mem}, power ${g.power_draw_w ?? '-'} / ${g.power_limit_w ?? '-'} W, SM ` +
          `${g.clocks_sm_mhz ?? '-'} MHz, ${g.temperature_gpu_c ?? '-'} C  [${g.source}]`,
      );
    }
    out.push('');
  }
  for (const n of r.nccl) {
    out.push(
      `NCCL ${n.version ?? ''} (${n.file}): network ${n.network ?? '?'}, ${n.nranks ?? '?'} ranks on ${n.nodes} node(s)`,
    );
    out.push(
      `  transports: ${
        Object.entries(n.transports)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none logged'
      }; GPUDirect RDMA connections ${n.gdrdma_connections}`,
    );
    if (n.avg_bus_bandwidth_gbps !== null)
      out.push(
        `  nccl-tests average bus bandwidth ${n.avg_bus_bandwidth_gbps} GB/s, peak ${fixed(n.peak_bus_bandwidth_gbps, 2)} GB/s`,
      );
    out.push('');
  }
  for (const s of r.steps) {
    out.push(
      `steps rank ${s.rank}: ${s.steps} steps, ${s.step_time_s.toFixed(3)} s/step = data ` +
        `${s.data_wait_s.toFixed(3)} + fwd/bwd ${s.forward_backward_s.toFixed(3)} + sync ` +
        `${s.sync_s.toFixed(3)} + optimizer ${s.optimizer_s.toFixed(3)}` +
        `${s.measures_between_steps ? ` + between steps ${s.between_steps_s.toFixed(3)}` : ''}`,
    );
  }
  // Warnings go to stderr (the CLI prints them) so stdout stays the report.
  return out.join('\n') + '\n';
}
