/**
 * The doctor's verdict on a running job from its own reports: each SDK report carries the step's
 * breakdown (data wait, forward+backward, sync, optimizer, time between steps) and the host's CPU
 * threads. Used by `goodput show` and the dashboard's job page, which poll the reports as the job
 * runs. Pure; no schema library, so the dashboard can bundle it.
 */
import { collectivesShortFix } from './findings/collectives-fix.js';
import type { Bottleneck } from './findings/finding.js';
import { rankFindings } from './findings/finding.js';
import { stepBreakdownFindings } from './findings/step-findings.js';
import { hostThreadsOf, type HostThreads, type StepPhases } from './parse/step-summary.js';

/** What the doctor needs of one report (a subset of the API's report record). */
export interface LiveReport {
  readonly step?: number;
  /** Attempt and replica count of the report: the verdict reads only the newest configuration's. */
  readonly attempt?: number;
  readonly num_replicas?: number;
  readonly breakdown?: Readonly<Record<string, number>> | null;
  /** The host's CPU threads and torch.distributed backend (SDK reports carry them; docs/contract.md). */
  readonly host?: HostThreads | null;
}

/** The verdict and one line of plain words with the fix. */
export interface LiveVerdict {
  readonly verdict: Bottleneck;
  /** e.g. "waits on data 40.2% of each step (last 120 steps): raise num_workers ...". */
  readonly line: string;
  readonly steps: number;
  readonly finding_id: string;
}

const PHASES = ['data_wait_s', 'forward_backward_s', 'sync_s', 'optimizer_s'] as const;

/** Short fix per verdict, for one line (communication's depends on the backend: collectivesShortFix). */
const SHORT_FIX: Partial<Record<Bottleneck, string>> = {
  'input-pipeline':
    'raise DataLoader num_workers, pin_memory=True, persistent_workers=True; move heavy transforms out of __getitem__',
  'host-overhead': 'raise the batch size or accumulate micro-batches; fused optimizer; torch.compile / CUDA graphs',
  'sync-points':
    'no loss.item() / torch.cuda.synchronize() / per-step logging after optimizer.step(): read metrics every N steps',
};

/**
 * The reports of the newest configuration (attempt and replica count of the newest report):
 * evidence of 3 replicas waiting on their peers says nothing about the same job on 1.
 */
function newestConfiguration(reports: readonly LiveReport[]): readonly LiveReport[] {
  const newest = reports[reports.length - 1];
  if (newest === undefined) return reports;
  let from = reports.length - 1;
  while (
    from > 0 &&
    reports[from - 1]!.attempt === newest.attempt &&
    reports[from - 1]!.num_replicas === newest.num_replicas
  )
    from--;
  return reports.slice(from);
}

/**
 * Verdict over the newest `window` reports of the newest configuration (attempt, replicas) that
 * carry a full breakdown; null when none does (the job has not reported, or not through the
 * SDK). Pure.
 */
export function liveVerdict(reports: readonly LiveReport[], window = 200): LiveVerdict | null {
  const steps: StepPhases[] = [];
  let host: HostThreads | undefined;
  for (const r of newestConfiguration(reports.slice(-window))) {
    const b = r.breakdown;
    if (!b || !PHASES.every((k) => typeof b[k] === 'number' && Number.isFinite(b[k]) && b[k]! >= 0)) continue;
    const between = b['between_steps_s'];
    steps.push({
      rank: 0,
      step: r.step ?? steps.length,
      data_wait_s: b['data_wait_s']!,
      forward_backward_s: b['forward_backward_s']!,
      sync_s: b['sync_s']!,
      optimizer_s: b['optimizer_s']!,
      ...(typeof between === 'number' && Number.isFinite(between) && between >= 0 ? { between_steps_s: between } : {}),
    });
    host = hostThreadsOf(r.host) ?? host; // the newest report that has one
  }
  if (steps.length === 0) return null;
  const ranked = rankFindings(stepBreakdownFindings({ steps, ...(host ? { host } : {}) }, 'reports'));
  const first = ranked.find((f) => f.id !== 'steps.straggler-rank');
  if (!first) return null;
  const over = `(last ${steps.length} reported step${steps.length === 1 ? '' : 's'})`;
  if (first.id === 'steps.compute-bound') {
    return {
      verdict: 'compute',
      line:
        `compute-bound: forward+backward is ${first.impact_pct.toFixed(1)}% of each step ${over}; ` +
        `nothing to fix in the input or sync; faster kernels next (mixed precision, torch.compile)`,
      steps: steps.length,
      finding_id: first.id,
    };
  }
  if (first.id === 'steps.data-wait' && host?.in_memory_dataset === true) {
    // Tensors in memory: no loader I/O to overlap, so more workers would only copy them between processes.
    const line =
      `this job spends ${first.impact_pct.toFixed(1)}% of each step building batches from its ` +
      `in-memory dataset (indexing and collating tensors in the training process, no I/O) ${over}` +
      `: index whole batches at once (slice the tensors) or raise the batch size; more ` +
      `num_workers would only copy the tensors between processes`;
    return { verdict: first.bottleneck, line, steps: steps.length, finding_id: first.id };
  }
  const what =
    first.id === 'steps.data-wait'
      ? `this job waits on data ${first.impact_pct.toFixed(1)}% of each step`
      : first.id === 'steps.sync-heavy'
        ? `this job waits on peers (gradient sync) ${first.impact_pct.toFixed(1)}% of each step`
        : first.id === 'steps.optimizer-heavy'
          ? `per-step overhead: the optimizer takes ${first.impact_pct.toFixed(1)}% of each step`
          : first.id === 'steps.between-steps'
            ? `this job spends ${first.impact_pct.toFixed(1)}% of each step between steps (host syncs or host work after optimizer.step())`
            : first.id === 'steps.cpu-oversubscribed'
              ? `CPU threads oversubscribed: ${first.evidence[0]}`
              : first.title;
  const fix =
    first.bottleneck === 'communication'
      ? collectivesShortFix(host?.dist_backend)
      : (SHORT_FIX[first.bottleneck] ?? first.fix[0]);
  return { verdict: first.bottleneck, line: `${what} ${over}: ${fix}`, steps: steps.length, finding_id: first.id };
}

/** The job as its page shows it now, to tell a current verdict from a stale one. */
export interface LiveJob {
  readonly state: string;
  /** Replicas it runs on now (0 when it runs on none). */
  readonly replicas: number;
}

/**
 * The doctor's line for a job's page and `goodput show`: the verdict while its evidence is
 * current (the job runs, at the replica count its newest reports measured); otherwise what is
 * known without passing old evidence off as the present. Pure.
 */
export function liveDoctorLine(reports: readonly LiveReport[], job: LiveJob): string {
  const v = liveVerdict(reports);
  if (v === null) return 'no step breakdown reported yet (the SDK reports one per step)';
  const measured = reports[reports.length - 1]?.num_replicas;
  const on = measured === undefined ? '' : ` on ${measured} replica${measured === 1 ? '' : 's'}`;
  if (job.state !== 'running') return `not running now (${job.state}); when it last ran${on}: ${v.line}`;
  if (measured !== undefined && job.replicas !== measured)
    return `no verdict yet on ${job.replicas} replica${job.replicas === 1 ? '' : 's'}: its newest step breakdowns are from ${measured}`;
  return v.line;
}
