/** Step breakdowns after validation, and their per-rank summary (no schema library: the dashboard bundles this). */
import { distBackendOf } from '../../core/dist-backend.js';

/** One training step of one rank, as the Goodput SDK exports it (seconds). */
export interface StepPhases {
  readonly rank: number;
  readonly step: number;
  readonly data_wait_s: number;
  readonly forward_backward_s: number;
  readonly sync_s: number;
  readonly optimizer_s: number;
  /**
   * The script's own time after optimizer.step() until the next step (`loss.item()`,
   * `torch.cuda.synchronize()`, logging); absent in logs of SDKs that did not measure it.
   */
  readonly between_steps_s?: number;
}

/**
 * CPU threads of the training processes on one host, when the export carries them, and the
 * torch.distributed backend they synchronise over (absent when torch.distributed was not
 * initialised, or in exports of older SDKs).
 */
export interface HostThreads {
  readonly cpu_count: number;
  readonly torch_threads: number;
  readonly local_processes?: number;
  readonly dataloader_workers?: number;
  /** The training loader reads tensors already in memory (TensorDataset): data wait is no I/O. */
  readonly in_memory_dataset?: boolean;
  /** e.g. `nccl`, `gloo`; well-formed per core/dist-backend.ts, anything else dropped. */
  readonly dist_backend?: string;
}

const isCount = (x: unknown, min: number): x is number => typeof x === 'number' && Number.isInteger(x) && x >= min;

/**
 * A host object (a report's `host`, a trace's `goodput_host`) when well-formed: cpu_count and
 * torch_threads counts >= 1; the optional counts and a malformed `dist_backend` are dropped, not
 * fatal. Undefined otherwise. Pure.
 */
export function hostThreadsOf(value: unknown): HostThreads | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const h = value as Record<string, unknown>;
  if (!isCount(h['cpu_count'], 1) || !isCount(h['torch_threads'], 1)) return undefined;
  const backend = distBackendOf(h['dist_backend']);
  return {
    cpu_count: h['cpu_count'],
    torch_threads: h['torch_threads'],
    ...(isCount(h['local_processes'], 1) ? { local_processes: h['local_processes'] } : {}),
    ...(isCount(h['dataloader_workers'], 0) ? { dataloader_workers: h['dataloader_workers'] } : {}),
    ...(h['in_memory_dataset'] === true ? { in_memory_dataset: true } : {}),
    ...(backend ? { dist_backend: backend } : {}),
  };
}

/** A validated export. */
export interface StepBreakdown {
  readonly job?: string;
  readonly host?: HostThreads;
  readonly steps: readonly StepPhases[];
}

/** Mean phase times per rank and the share of each phase in the step (0..1). */
export interface RankStepSummary {
  readonly rank: number;
  readonly steps: number;
  readonly step_time_s: number;
  readonly data_wait_s: number;
  readonly forward_backward_s: number;
  readonly sync_s: number;
  readonly optimizer_s: number;
  /** 0 when the log does not carry it (see `measures_between_steps`). */
  readonly between_steps_s: number;
  /** False for logs without `between_steps_s` (older SDKs): time between steps is then unseen. */
  readonly measures_between_steps: boolean;
}

/** Pure; ranks sorted ascending. */
export function summarizeSteps(b: StepBreakdown): RankStepSummary[] {
  const acc = new Map<number, { n: number; d: number; f: number; s: number; o: number; b: number; seen: boolean }>();
  for (const r of b.steps) {
    const a = acc.get(r.rank) ?? { n: 0, d: 0, f: 0, s: 0, o: 0, b: 0, seen: false };
    a.n++;
    a.d += r.data_wait_s;
    a.f += r.forward_backward_s;
    a.s += r.sync_s;
    a.o += r.optimizer_s;
    if (r.between_steps_s !== undefined) {
      a.b += r.between_steps_s;
      a.seen = true;
    }
    acc.set(r.rank, a);
  }
  return [...acc.entries()]
    .sort((x, y) => x[0] - y[0])
    .map(([rank, a]) => ({
      rank,
      steps: a.n,
      step_time_s: (a.d + a.f + a.s + a.o + a.b) / a.n,
      data_wait_s: a.d / a.n,
      forward_backward_s: a.f / a.n,
      sync_s: a.s / a.n,
      optimizer_s: a.o / a.n,
      between_steps_s: a.b / a.n,
      measures_between_steps: a.seen,
    }));
}
