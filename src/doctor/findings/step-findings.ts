/**
 * Findings from the SDK's step-time breakdown (GOODPUT_STEP_LOG): the phases of each step are
 * attributed to causes (data wait: input pipeline; sync: waiting on peers; optimizer: a per-step
 * fixed cost; forward+backward: compute; the script's time between steps: host syncs or host
 * work after optimizer.step()) whose shares add up to 100%.
 */
import type { StepBreakdown } from '../parse/step-summary.js';
import { summarizeSteps } from '../parse/step-summary.js';
import { CAUSE_FIX, severityOf } from './attribution-findings.js';
import { collectivesFix } from './collectives-fix.js';
import { cpuOversubscription } from './cpu-threads.js';
import type { Finding } from './finding.js';
import { fmtPct } from './finding.js';

/** Thresholds in percent of step time; docs/doctor.md says where each comes from. */
export const STEP_THRESHOLD_PCT = {
  data_wait: 5,
  sync: 10,
  optimizer: 25,
  optimizer_vs_compute: 0.3,
  straggler_excess: 10,
  between_steps: 5,
} as const;

/** Fixes for time the script spends between steps, most likely cause first. */
const BETWEEN_STEPS_FIX: readonly string[] = [
  'On a GPU the classic cause is a host sync after optimizer.step(): loss.item(), ' +
    'tensor.cpu(), print(cuda_tensor), torch.cuda.synchronize() every step; accumulate metrics ' +
    'on the device and read them every N steps',
  'Log, evaluate and checkpoint every N steps, not every step; hand slow logging (disk, ' +
    'network) to a background thread without waiting for it each step',
  'To tell which: profile a few steps (torch.profiler with prof.step()) and run goodput ' +
    'doctor on the trace; torch.cuda.set_sync_debug_mode("warn") names the syncs',
];

/** Findings from the SDK's step-time breakdown export. Pure. */
export function stepBreakdownFindings(b: StepBreakdown, src: string): Finding[] {
  const out: Finding[] = [];
  const ranks = summarizeSteps(b);
  const all = ranks.reduce(
    (acc, r) => ({
      d: acc.d + r.data_wait_s * r.steps,
      f: acc.f + r.forward_backward_s * r.steps,
      s: acc.s + r.sync_s * r.steps,
      o: acc.o + r.optimizer_s * r.steps,
      b: acc.b + r.between_steps_s * r.steps,
    }),
    { d: 0, f: 0, s: 0, o: 0, b: 0 },
  );
  const total = all.d + all.f + all.s + all.o + all.b;
  if (total <= 0) return out;
  const share = {
    d: (100 * all.d) / total,
    s: (100 * all.s) / total,
    o: (100 * all.o) / total,
    f: (100 * all.f) / total,
    b: (100 * all.b) / total,
  };
  const meanStep_ms = (1000 * total) / b.steps.length;
  const measuresBetween = ranks.some((r) => r.measures_between_steps);
  const evidence = [
    `${b.steps.length} steps from ${ranks.length} rank(s)${b.job ? ` of job ${b.job}` : ''}, ` +
      `${meanStep_ms.toFixed(1)} ms per step: data wait ${fmtPct(share.d)}, forward+backward ` +
      `${fmtPct(share.f)}, sync ${fmtPct(share.s)}, optimizer ${fmtPct(share.o)}` +
      `${measuresBetween ? `, between steps ${fmtPct(share.b)}` : ''} (adds up to 100%)`,
  ];
  if (!measuresBetween)
    evidence.push(
      'this log has no between_steps_s (written by an SDK that did not measure the time between ' +
        'steps): a loss.item() or torch.cuda.synchronize() after optimizer.step() is in no phase ' +
        'here',
    );
  if (share.b >= STEP_THRESHOLD_PCT.between_steps) {
    out.push({
      id: 'steps.between-steps',
      severity: severityOf(share.b),
      bottleneck: 'sync-points',
      title:
        `Synchronisation or host work between steps: ${fmtPct(share.b)} of each step passes after ` +
        `optimizer.step() before the next batch is asked for`,
      evidence: [
        ...evidence,
        `${((1000 * all.b) / b.steps.length).toFixed(1)} ms per step in the script's own code ` +
          `between steps, where loss.item(), torch.cuda.synchronize(), logging and evaluation sit; a ` +
          `step log cannot tell which (a GPU trace can)`,
      ],
      fix: BETWEEN_STEPS_FIX,
      impact_pct: share.b,
      source: src,
    });
  }
  if (share.d >= STEP_THRESHOLD_PCT.data_wait) {
    out.push({
      id: 'steps.data-wait',
      severity: severityOf(share.d),
      bottleneck: 'input-pipeline',
      title: `Training waits for data ${fmtPct(share.d)} of each step`,
      evidence,
      fix: CAUSE_FIX['input-pipeline'],
      impact_pct: share.d,
      source: src,
    });
  }
  if (share.s >= STEP_THRESHOLD_PCT.sync) {
    const backend = b.host?.dist_backend;
    out.push({
      id: 'steps.sync-heavy',
      severity: severityOf(share.s),
      bottleneck: 'communication',
      title: `Waiting on peers: gradient synchronisation takes ${fmtPct(share.s)} of each step`,
      evidence: [
        ...evidence,
        backend
          ? `torch.distributed backend: ${backend} (the log's host.dist_backend); the fixes are for it`
          : 'the log does not name the torch.distributed backend (host.dist_backend: written by SDKs ' +
            'that record it, when torch.distributed is initialized): the fixes assume none',
      ],
      fix: collectivesFix(backend),
      impact_pct: share.s,
      source: src,
    });
  }
  // The optimizer's cost does not grow with the batch, forward+backward's does: an optimizer that
  // takes a quarter of the step, or 30% as long as forward+backward, means too little work per step.
  const perStepBound =
    share.o >= STEP_THRESHOLD_PCT.optimizer || share.o >= STEP_THRESHOLD_PCT.optimizer_vs_compute * share.f;
  if (perStepBound) {
    out.push({
      id: 'steps.optimizer-heavy',
      severity: severityOf(share.o),
      bottleneck: 'host-overhead',
      title:
        `Per-step fixed costs: the optimizer alone takes ${fmtPct(share.o)} of each ` +
        `${meanStep_ms.toFixed(1)} ms step, ${(share.o / Math.max(share.f, 1e-9)).toFixed(2)}x ` +
        `forward+backward (too little work per step to amortise it)`,
      evidence,
      fix: CAUSE_FIX['host-overhead'],
      impact_pct: share.o,
      source: src,
    });
  }
  // A straggler as the live verdict names one (doctor/ranks/straggler.ts): the rank whose own
  // work per step (data wait, compute, time between steps: all but waiting on peers) is above the
  // median rank's, with the phase that makes it slow and what it costs the job.
  const phases = {
    data: (r: (typeof ranks)[number]) => r.data_wait_s,
    compute: (r: (typeof ranks)[number]) => r.forward_backward_s + r.optimizer_s,
    'time between steps': (r: (typeof ranks)[number]) => r.between_steps_s,
  };
  const own = (r: (typeof ranks)[number]) => r.data_wait_s + r.forward_backward_s + r.optimizer_s + r.between_steps_s;
  const medianOf = (xs: number[]) => [...xs].sort((a, c) => a - c)[Math.floor((xs.length - 1) / 2)]!;
  const slow = [...ranks].sort((a, c) => own(c) - own(a))[0]!;
  const others = ranks.filter((r) => r !== slow);
  const median = others.length > 0 ? medianOf(others.map(own)) : 0;
  if (ranks.length >= 2 && median > 0 && own(slow) > (1 + STEP_THRESHOLD_PCT.straggler_excess / 100) * median) {
    const excess = own(slow) - median;
    const [phase] = Object.entries(phases)
      .map(([k, f]) => [k, f(slow) - medianOf(others.map(f))] as const)
      .reduce((a, c) => (c[1] > a[1] ? c : a));
    const job_step_s = medianOf(ranks.map((r) => r.step_time_s));
    const slower_pct = (100 * excess) / Math.max(job_step_s - excess, median, 1e-9);
    out.push({
      id: 'steps.straggler-rank',
      severity: 'warning',
      bottleneck: 'communication',
      title:
        `Rank ${slow.rank} is a straggler: its own work per step is ${fmtPct((100 * excess) / median)} ` +
        `longer than the median rank's, in ${phase}; the others wait in sync: the job runs ` +
        `${fmtPct(slower_pct)} slower than without it`,
      evidence: ranks.map(
        (r) =>
          `rank ${r.rank}: step ${r.step_time_s.toFixed(3)} s (data ${r.data_wait_s.toFixed(3)}, ` +
          `fwd+bwd ${r.forward_backward_s.toFixed(3)}, sync ${r.sync_s.toFixed(3)}, opt ` +
          `${r.optimizer_s.toFixed(3)}, between ${r.between_steps_s.toFixed(3)})`,
      ),
      fix:
        phase === 'data'
          ? ["Check that rank's data source, shard size and loader workers"]
          : phase === 'compute'
            ? [
                "Check that rank's GPU (clocks, throttling, other processes: nvidia-smi) and what else runs " +
                  'on its CPU cores',
                'Bind processes to the CPU socket of their GPU (numactl / mpirun --map-by socket)',
              ]
            : ['Check what the script does after optimizer.step() on that rank (logging, evaluation, syncs)'],
      impact_pct: (100 * excess) / slow.step_time_s,
      source: src,
    });
  }
  const over = b.host ? cpuOversubscription(b.host, 'steps', src) : null;
  if (over) out.push({ ...over, evidence: [...over.evidence, ...evidence] });
  if (!perStepBound && !over && share.f >= Math.max(share.d, share.s, share.o, share.b)) {
    out.push({
      id: 'steps.compute-bound',
      severity: 'info',
      bottleneck: 'compute',
      title: `Compute-bound: forward+backward is ${fmtPct(share.f)} of each step, the largest share`,
      evidence,
      fix: CAUSE_FIX.compute,
      impact_pct: share.f,
      source: src,
    });
  }
  return out;
}
