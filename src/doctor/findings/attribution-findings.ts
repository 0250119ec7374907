/**
 * Findings from a time attribution: one per cause at or above its threshold, its impact the share
 * of time the cause takes (what removing it would save, an upper bound), its fix aimed at it.
 */
import type { Cause, CauseShare, TimeAttribution } from '../analyze/attribution.js';
import { collectivesFix } from './collectives-fix.js';
import type { Bottleneck, Finding } from './finding.js';
import { fmtPct } from './finding.js';

/**
 * Share of time (percent) from which a cause is reported. Sources (docs/doctor.md): input 5% is
 * the PyTorch profiler plugin's DataLoader rule; collectives 10% its communication rule; the
 * others are the doctor's own choices.
 */
export const CAUSE_THRESHOLD_PCT: Readonly<Record<Exclude<Cause, 'compute'>, number>> = {
  'input-pipeline': 5,
  collectives: 10,
  'host-overhead': 10,
  'sync-points': 5,
  'memory-copies': 5,
};

/** The finding id of each cause in a trace and in an SDK step log. */
export const CAUSE_ID: Readonly<Record<Cause, string>> = {
  'input-pipeline': 'input-pipeline',
  'host-overhead': 'launch-overhead',
  'sync-points': 'sync-points',
  collectives: 'unoverlapped-communication',
  'memory-copies': 'memory-copies',
  compute: 'compute-bound',
};

export const CAUSE_TEXT: Readonly<Record<Cause, string>> = {
  'input-pipeline': 'waiting for input data (DataLoader)',
  'host-overhead': 'host-side launch / per-step overhead',
  'sync-points': 'synchronisation points (.item(), synchronize)',
  collectives: 'waiting on peers / collectives',
  'memory-copies': 'host-device memory copies',
  compute: 'compute',
};

const CAUSE_BOTTLENECK: Readonly<Record<Exclude<Cause, 'compute'>, Bottleneck>> = {
  'input-pipeline': 'input-pipeline',
  'host-overhead': 'host-overhead',
  'sync-points': 'sync-points',
  collectives: 'communication',
  'memory-copies': 'host-device-copy',
};

/** Fixes per cause, most effective first. */
export const CAUSE_FIX: Readonly<Record<Cause, readonly string[]>> = {
  'input-pipeline': [
    'DataLoader(dataset, batch_size=..., num_workers=<CPU cores per GPU, e.g. 8>, pin_memory=True, persistent_workers=True, prefetch_factor=2)',
    'Move heavy decoding/augmentation out of __getitem__ into workers or onto the GPU (NVIDIA ' +
      'DALI, torchvision.transforms.v2 on tensors); cache decoded samples; keep datasets on ' +
      'local NVMe',
    'Copy batches asynchronously: batch = batch.to("cuda", non_blocking=True)',
  ],
  'host-overhead': [
    'Do more work per launch: raise the batch size (or accumulate micro-batches) so fixed per-step costs are amortised',
    'Fuse small ops and cut Python per step: torch.compile(model); CUDA graphs (torch.compile(mode="reduce-overhead") or torch.cuda.CUDAGraph)',
    'Use fused/foreach optimizers: torch.optim.AdamW(params, fused=True)',
  ],
  'sync-points': [
    'Remove per-step host syncs: no loss.item(), tensor.cpu(), print(cuda_tensor) or ' +
      'torch.cuda.synchronize() inside the step; accumulate metrics on the device and read them ' +
      'every N steps',
    'Keep data-dependent control flow on the device (torch.where instead of if tensor:), and use non_blocking=True copies',
    'Find the remaining syncs with torch.cuda.set_sync_debug_mode("warn")',
    'Log, evaluate and checkpoint every N steps, not every step; hand slow logging (disk, ' +
      'network) to a background thread without waiting for it each step',
  ],
  // Without the backend: neutral advice; the step log and a CPU trace's goodput_host name it.
  collectives: collectivesFix(undefined),
  'memory-copies': [
    'DataLoader(..., pin_memory=True) and batch.to("cuda", non_blocking=True)',
    'Keep tensors on the device between steps; avoid .cpu()/.numpy() round trips in the step',
  ],
  compute: [
    'Speed comes from faster kernels now: mixed precision (torch.autocast with BF16, or FP16 + ' +
      'GradScaler), torch.backends.cudnn.benchmark = True for fixed shapes, channels_last for ' +
      'CNNs, torch.compile',
    'On CPUs: torch.set_num_threads(<physical cores per process>), bfloat16 autocast on CPUs ' +
      'that support it; more data-parallel processes only if cores are free',
  ],
};

/**
 * Severity of a cause by its share: reported from its threshold as a note (info), a warning from
 * 10% and critical from 25% of the time.
 */
export function severityOf(pct: number): Finding['severity'] {
  return pct >= 25 ? 'critical' : pct >= 10 ? 'warning' : 'info';
}

/** The cause with the largest share. Pure. */
export function largestCause(a: TimeAttribution): CauseShare {
  return [...a.causes].sort((x, y) => y.pct - x.pct)[0]!;
}

/** One line naming every cause's share, e.g. "compute 62.1%, input 30.0%, ...". Pure. */
export function sharesLine(a: TimeAttribution): string {
  return [...a.causes]
    .filter((c) => c.pct > 0)
    .sort((x, y) => y.pct - x.pct)
    .map((c) => `${CAUSE_TEXT[c.cause]} ${fmtPct(c.pct)}`)
    .join(', ');
}

/**
 * Findings for one attribution. `prefix` is `trace` or `steps`; `what` names whose time it is
 * ("rank 0", "job x"); `device` picks the compute bottleneck ('gpu-compute', 'cpu-compute' or
 * 'compute' when the input does not say); `more.extra` adds evidence per cause;
 * `more.dist_backend` picks the collectives' fix (absent: advice that assumes no backend). Pure.
 */
export function attributionFindings(
  a: TimeAttribution,
  prefix: string,
  what: string,
  device: Bottleneck,
  source: string,
  more: { readonly extra?: Partial<Record<Cause, readonly string[]>>; readonly dist_backend?: string } = {},
): Finding[] {
  const extra = more.extra ?? {};
  const out: Finding[] = [];
  const basis = a.basis === 'gpu-time' ? 'of GPU time' : 'of each step';
  const shares = `${what}: ${sharesLine(a)} (${a.basis === 'gpu-time' ? 'GPU time' : `step time over ${a.steps} step(s)`}, adds up to 100%)`;
  for (const c of a.causes) {
    if (c.cause === 'compute') continue;
    if (c.pct < CAUSE_THRESHOLD_PCT[c.cause] || c.time_us <= 0) continue;
    out.push({
      id: `${prefix}.${CAUSE_ID[c.cause]}`,
      severity: severityOf(c.pct),
      bottleneck: CAUSE_BOTTLENECK[c.cause],
      title: `${CAUSE_TEXT[c.cause][0]!.toUpperCase()}${CAUSE_TEXT[c.cause].slice(1)}: ${fmtPct(c.pct)} ${basis}`,
      evidence: [shares, ...c.evidence, ...(extra[c.cause] ?? [])],
      fix: c.cause === 'collectives' ? collectivesFix(more.dist_backend) : CAUSE_FIX[c.cause],
      impact_pct: c.pct,
      source,
    });
  }
  const top = largestCause(a);
  if (top.cause === 'compute') {
    out.push({
      id: `${prefix}.compute-bound`,
      severity: 'info',
      bottleneck: device,
      title:
        `Compute-bound (` +
        `${device === 'cpu-compute' ? 'CPU' : device === 'gpu-compute' ? 'GPU' : 'forward/backward/optimizer'}` +
        `): compute is ${fmtPct(top.pct)} ${basis}, the largest share`,
      // Its impact is the time faster kernels would act on: the largest measured cause comes first.
      evidence: [shares, ...top.evidence],
      fix: CAUSE_FIX.compute,
      impact_pct: top.pct,
      source,
    });
  }
  return out;
}
