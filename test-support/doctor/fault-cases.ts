/**
 * The fault-injection cases of bench/doctor-faults.ts and the answers the doctor must give: the
 * bottleneck its first finding and its verdict must name. Shared by the benchmark (fresh
 * recordings) and its test (the recorded fixtures), so both judge the same way.
 */
import type { Bottleneck } from '../../src/doctor/findings/finding.js';
import type { DoctorReport } from '../../src/doctor/report/model.js';

/** One injected bottleneck and what a correct diagnosis names. */
export interface FaultCase {
  readonly name: string;
  /** What was injected, in words. */
  readonly injected: string;
  /** Bottlenecks a correct first finding and verdict may name. */
  readonly expect: readonly Bottleneck[];
  /** Healthy runs must also have no issue (warning or critical). */
  readonly noIssues?: boolean;
  /** Why the expectation differs from the injected cause, when it does. */
  readonly note?: string;
  /**
   * The artifact that carries no evidence of this cause, and why: the case is judged through the
   * other artifact only, and the benchmark prints this row as not judged (outside the accuracy).
   */
  readonly notJudgedVia?: { readonly via: 'trace' | 'steps'; readonly why: string };
}

const COMPUTE: readonly Bottleneck[] = ['cpu-compute', 'gpu-compute', 'compute'];

/** The CPU cases bench/doctor_faults.py records (Debian's torch 1.13). */
export const CPU_CASES: readonly FaultCase[] = [
  {
    name: 'slow-getitem',
    injected: 'slow Dataset.__getitem__ (1.5 ms sleep per sample, 1 worker)',
    expect: ['input-pipeline'],
  },
  { name: 'heavy-transform', injected: 'heavy per-sample NumPy transform, num_workers=0', expect: ['input-pipeline'] },
  { name: 'batch-size-1', injected: 'batch size 1 (per-step fixed costs)', expect: ['host-overhead'] },
  {
    name: 'item-sync',
    injected: 'loss.item() every step (in the healthy run)',
    expect: COMPUTE,
    noIssues: true,
    note: 'a CPU has no asynchronous device, so .item() waits for nothing: the doctor must not blame it and must still say compute; the H100 replay below has the costly case',
  },
  {
    name: 'wait-between-steps',
    injected:
      "after optimizer.step() the loop waits for the previous step's metrics upload (background thread, 20 ms round trip)",
    expect: ['sync-points'],
    note: 'the CPU counterpart of a per-step .item() on a GPU: the host blocks between steps on work running elsewhere',
  },
  {
    name: 'oversubscribed',
    injected: 'torch.set_num_threads(8 x the usable cores, at least 16)',
    expect: ['cpu-contention'],
    note: "the evidence is the thread and core counts: the step log's host, the trace's goodput_host (written by goodput.torch.trace_handler; torch 1.13's own CPU trace has none, and the doctor then says it cannot tell)",
  },
  { name: 'healthy', injected: 'none (large matrices, in-memory data)', expect: COMPUTE, noIssues: true },
];

/** GPU recordings replayed from fixtures/doctor/faults (H100, torch 2.11) and HTA's traces, with their known answers. */
export const GPU_REPLAYS: readonly (FaultCase & { readonly files: readonly string[] })[] = [
  {
    name: 'H100 slow-getitem',
    injected: 'slow Dataset.__getitem__ (2 ms sleep, 2 workers)',
    expect: ['input-pipeline'],
    files: ['faults/gpu-slow-getitem.trace.json.gz', 'faults/gpu-slow-getitem.steps.json'],
  },
  {
    name: 'H100 item-sync',
    injected: 'loss.item() and an accuracy .item() every step',
    expect: ['sync-points'],
    notJudgedVia: {
      via: 'steps',
      why: 'judged through the profiler trace only: this step log was recorded (H100, no GPU since) by an SDK that did not yet measure the time between steps (no between_steps_s), and a .item() after optimizer.step() blocks outside its phases; the SDK now records it, as the CPU wait-between-steps case shows',
    },
    files: ['faults/gpu-item-sync.trace.json.gz', 'faults/gpu-item-sync.steps.json'],
  },
  {
    name: 'H100 healthy',
    injected: 'none (BF16, 8192-wide MLP, data on the GPU)',
    expect: COMPUTE,
    noIssues: true,
    files: ['faults/gpu-healthy.trace.json.gz', 'faults/gpu-healthy.steps.json'],
  },
  {
    name: 'HTA V100 DDP',
    injected: 'known: GPU-compute-bound (SOURCES.md)',
    expect: ['gpu-compute'],
    files: ['pytorch-traces/v100-ddp1-gpu-bound.rank0.json.gz'],
  },
  {
    name: 'HTA A100 2 ranks',
    injected: 'known: GPU idle waiting on the host (SOURCES.md)',
    expect: ['host-overhead', 'input-pipeline'],
    files: ['pytorch-traces/a100-2rank-nccl'],
  },
  {
    name: 'HTA recsys 2 of 128 ranks',
    injected: 'known: communication-heavy (SOURCES.md)',
    expect: ['communication'],
    files: ['pytorch-traces/recsys-128rank-sampled'],
  },
];

/** The doctor's answer for one input and whether it names the expected cause. */
export interface Judgement {
  readonly first_finding: string;
  readonly first_bottleneck: Bottleneck | null;
  readonly verdict: Bottleneck;
  readonly issues: number;
  readonly match: boolean;
}

/** Judges a report against a case: first finding and verdict name an expected bottleneck (and a healthy run has no issue). Pure. */
export function judge(report: DoctorReport, c: FaultCase): Judgement {
  const first = report.findings[0];
  const issues = report.findings.filter((f) => f.severity !== 'info').length;
  const match =
    report.inputs.length > 0 &&
    first !== undefined &&
    c.expect.includes(first.bottleneck) &&
    c.expect.includes(report.verdict) &&
    (!c.noIssues || issues === 0);
  return {
    first_finding: first ? `${first.id} (${first.title})` : '(none)',
    first_bottleneck: first?.bottleneck ?? null,
    verdict: report.verdict,
    issues,
    match,
  };
}
