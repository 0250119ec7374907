/**
 * Findings from the SDK's step-time breakdown (GOODPUT_STEP_LOG): the phases of each step are
 * attributed to causes (data wait: input pipeline; sync: waiting on peers; optimizer: a per-step
 * fixed cost; forward+backward: compute) whose shares add up to 100%.
 */
import type { StepBreakdown } from '../parse/step-summary.js';
import { summarizeSteps } from '../parse/step-summary.js';
import { CAUSE_FIX, severityOf } from './attribution-findings.js';
import type { Finding } from './finding.js';
import { fmtPct } from './finding.js';

/** Thresholds in percent of step time; docs/doctor.md says where each comes from. */
export const STEP_THRESHOLD_PCT = { data_wait: 5, sync: 10, optimizer: 25, optimizer_vs_compute: 0.3, straggler_excess: 10 } as const;

/**
 * More runnable CPU threads than cores: each thread gets cores/threads of a core, so up to
 * 1 - cores/threads of the compute time is waiting for a core (SageMaker Debugger's Dataloader
 * rule likewise compares processes with available cores, flagging above 200%).
 */
function oversubscription(b: StepBreakdown): Omit<Finding, 'source'> | null {
  const h = b.host;
  if (!h) return null;
  // Each training process runs its intra-op threads and its own DataLoader workers (one thread each).
  const procs = h.local_processes ?? 1;
  const workers = h.dataloader_workers ?? 0;
  const threads = procs * (h.torch_threads + workers);
  if (threads <= h.cpu_count) return null;
  const waiting = 100 * (1 - h.cpu_count / threads);
  return {
    id: 'steps.cpu-oversubscribed', severity: severityOf(waiting), bottleneck: 'cpu-contention',
    title: `CPU threads oversubscribed: ${threads} busy threads on ${h.cpu_count} cores`,
    evidence: [`${procs} process(es) x (${h.torch_threads} torch threads + ${workers} DataLoader worker(s)) = ${threads} threads for ${h.cpu_count} cores: each gets ${(h.cpu_count / threads).toFixed(2)} of a core`],
    fix: [`torch.set_num_threads(${Math.max(1, Math.floor(h.cpu_count / procs) - workers)}) (or OMP_NUM_THREADS) so processes x (threads + workers) <= cores`, 'torchrun sets OMP_NUM_THREADS=1 per process by default: raise it only up to cores / processes'],
    impact_pct: waiting,
  };
}

/** Findings from the SDK's step-time breakdown export. Pure. */
export function stepBreakdownFindings(b: StepBreakdown, src: string): Finding[] {
  const out: Finding[] = [];
  const ranks = summarizeSteps(b);
  const all = ranks.reduce((acc, r) => ({ d: acc.d + r.data_wait_s * r.steps, f: acc.f + r.forward_backward_s * r.steps, s: acc.s + r.sync_s * r.steps, o: acc.o + r.optimizer_s * r.steps }), { d: 0, f: 0, s: 0, o: 0 });
  const total = all.d + all.f + all.s + all.o;
  if (total <= 0) return out;
  const share = { d: (100 * all.d) / total, s: (100 * all.s) / total, o: (100 * all.o) / total, f: (100 * all.f) / total };
  const meanStep_ms = (1000 * total) / b.steps.length;
  const evidence = [`${b.steps.length} steps from ${ranks.length} rank(s)${b.job ? ` of job ${b.job}` : ''}, ${meanStep_ms.toFixed(1)} ms per step: data wait ${fmtPct(share.d)}, forward+backward ${fmtPct(share.f)}, sync ${fmtPct(share.s)}, optimizer ${fmtPct(share.o)} (adds up to 100%)`];
  if (share.d >= STEP_THRESHOLD_PCT.data_wait) {
    out.push({ id: 'steps.data-wait', severity: severityOf(share.d), bottleneck: 'input-pipeline', title: `Training waits for data ${fmtPct(share.d)} of each step`, evidence,
      fix: CAUSE_FIX['input-pipeline'], impact_pct: share.d, source: src });
  }
  if (share.s >= STEP_THRESHOLD_PCT.sync) {
    out.push({ id: 'steps.sync-heavy', severity: severityOf(share.s), bottleneck: 'communication', title: `Waiting on peers: gradient synchronisation takes ${fmtPct(share.s)} of each step`, evidence,
      fix: CAUSE_FIX.collectives, impact_pct: share.s, source: src });
  }
  // The optimizer's cost does not grow with the batch, forward+backward's does: an optimizer that
  // takes a quarter of the step, or 30% as long as forward+backward, means too little work per step.
  const perStepBound = share.o >= STEP_THRESHOLD_PCT.optimizer || share.o >= STEP_THRESHOLD_PCT.optimizer_vs_compute * share.f;
  if (perStepBound) {
    out.push({ id: 'steps.optimizer-heavy', severity: severityOf(share.o), bottleneck: 'host-overhead',
      title: `Per-step fixed costs: the optimizer alone takes ${fmtPct(share.o)} of each ${meanStep_ms.toFixed(1)} ms step, ${(share.o / Math.max(share.f, 1e-9)).toFixed(2)}x forward+backward (too little work per step to amortise it)`, evidence,
      fix: CAUSE_FIX['host-overhead'], impact_pct: share.o, source: src });
  }
  const times = ranks.map((r) => r.forward_backward_s).sort((a, c) => a - c);
  const median = times[Math.floor((times.length - 1) / 2)]!;
  const slow = [...ranks].sort((a, c) => c.forward_backward_s - a.forward_backward_s)[0]!;
  if (ranks.length >= 2 && median > 0 && slow.forward_backward_s > (1 + STEP_THRESHOLD_PCT.straggler_excess / 100) * median) {
    out.push({ id: 'steps.straggler-rank', severity: 'warning', bottleneck: 'communication',
      title: `Rank ${slow.rank} computes ${fmtPct((100 * (slow.forward_backward_s - median)) / median)} longer than the median rank; the others wait in sync`,
      evidence: ranks.map((r) => `rank ${r.rank}: step ${r.step_time_s.toFixed(3)} s (data ${r.data_wait_s.toFixed(3)}, fwd+bwd ${r.forward_backward_s.toFixed(3)}, sync ${r.sync_s.toFixed(3)}, opt ${r.optimizer_s.toFixed(3)})`),
      fix: ['Check that rank\'s GPU (clocks, throttling, other processes: nvidia-smi) and its data shard size', 'Bind processes to the CPU socket of their GPU (numactl / mpirun --map-by socket)'],
      impact_pct: (100 * (slow.forward_backward_s - median)) / slow.step_time_s, source: src });
  }
  const over = oversubscription(b);
  if (over) out.push({ ...over, evidence: [...over.evidence, ...evidence], source: src });
  if (!perStepBound && !over && share.f >= Math.max(share.d, share.s, share.o)) {
    out.push({ id: 'steps.compute-bound', severity: 'info', bottleneck: 'compute',
      title: `Compute-bound: forward+backward is ${fmtPct(share.f)} of each step, the largest share`, evidence, fix: CAUSE_FIX.compute, impact_pct: share.f, source: src });
  }
  return out;
}
