/**
 * Thread oversubscription from the host's thread and core counts, which neither step times nor
 * operator timelines show: the SDK writes them into its step log (`host`) and its profiler
 * export (`goodput_host`, goodput.torch.export_trace). Shared by both readers.
 */
import type { HostThreads } from '../parse/step-summary.js';
import { severityOf } from './attribution-findings.js';
import type { Finding } from './finding.js';

/**
 * More runnable CPU threads than cores: each thread gets cores/threads of a core, so up to
 * 1 - cores/threads of the compute time is waiting for a core (SageMaker Debugger's Dataloader
 * rule likewise compares processes with available cores, flagging above 200%). `prefix` is
 * `steps` or `trace`. Pure; null when the threads fit the cores.
 */
export function cpuOversubscription(h: HostThreads, prefix: 'steps' | 'trace', source: string): Finding | null {
  // Each training process runs its intra-op threads and its own DataLoader workers (one thread each).
  const procs = h.local_processes ?? 1;
  const workers = h.dataloader_workers ?? 0;
  const threads = procs * (h.torch_threads + workers);
  if (threads <= h.cpu_count) return null;
  const waiting = 100 * (1 - h.cpu_count / threads);
  return {
    id: `${prefix}.cpu-oversubscribed`,
    severity: severityOf(waiting),
    bottleneck: 'cpu-contention',
    title: `CPU threads oversubscribed: ${threads} busy threads on ${h.cpu_count} cores`,
    evidence: [
      `${procs} process(es) x (${h.torch_threads} torch threads + ${workers} DataLoader ` +
        `worker(s)) = ${threads} threads for ${h.cpu_count} cores: each gets ` +
        `${(h.cpu_count / threads).toFixed(2)} of a core`,
    ],
    fix: [
      `torch.set_num_threads(${Math.max(1, Math.floor(h.cpu_count / procs) - workers)}) (or ` +
        `OMP_NUM_THREADS) so processes x (threads + workers) <= cores`,
      'torchrun sets OMP_NUM_THREADS=1 per process by default: raise it only up to cores / processes',
    ],
    impact_pct: waiting,
    source,
  };
}

/** What the doctor says on a CPU run whose file has no thread or core counts. */
export const THREADS_UNKNOWN =
  'thread oversubscription cannot be told from this file (it carries no thread or core ' +
  'counts; an oversubscribed run looks compute-bound here): export the trace with ' +
  'goodput.torch.export_trace, or give the doctor the SDK step log (GOODPUT_STEP_LOG)';
