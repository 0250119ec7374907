/**
 * Explains every percent of a rank's time: GPU time (first to last GPU activity) on GPU traces,
 * step time on CPU-only traces, split into named causes whose shares add up to 100%.
 */
import { CPU_CLASS, SYNC_OP_RE, type KinetoRank } from '../parse/kineto/kineto-collector.js';
import { KIND_CODE } from '../parse/kineto/kernel-kind.js';
import type { PreparedRank } from './hta/prepare.js';
import { mergeIntervals, totalLength } from './hta/prepare.js';
import { CONSECUTIVE_KERNEL_DELAY_US } from './hta/launch.js';
import { intersect, length, sharesOf, subtract, union, type Interval } from './intervals.js';

/** The causes time is attributed to. */
export type Cause = 'input-pipeline' | 'host-overhead' | 'sync-points' | 'collectives' | 'memory-copies' | 'compute';

export const CAUSES: readonly Cause[] = [
  'input-pipeline',
  'host-overhead',
  'sync-points',
  'collectives',
  'memory-copies',
  'compute',
];

/** One cause's time; `pct` values of an attribution add up to exactly 100. */
export interface CauseShare {
  readonly cause: Cause;
  readonly time_us: number;
  readonly pct: number;
  /** How the time was recognised, in numbers. */
  readonly evidence: readonly string[];
}

/** A rank's time split by cause. */
export interface TimeAttribution {
  /** `gpu-time`: the GPU's timeline; `step-time`: the training thread's profiler steps (CPU runs). */
  readonly basis: 'gpu-time' | 'step-time';
  readonly total_us: number;
  readonly steps: number;
  readonly causes: readonly CauseShare[];
}

function finish(
  basis: TimeAttribution['basis'],
  total: number,
  steps: number,
  parts: Record<Cause, { us: number; evidence: string[] }>,
): TimeAttribution {
  const pcts = sharesOf(
    CAUSES.map((c) => parts[c].us),
    total,
  );
  return {
    basis,
    total_us: total,
    steps,
    causes: CAUSES.map((c, i) => ({ cause: c, time_us: parts[c].us, pct: pcts[i]!, evidence: parts[c].evidence })),
  };
}

const ms = (us: number): string =>
  us >= 1e6 ? `${(us / 1e6).toFixed(2)} s` : us >= 1e3 ? `${(us / 1e3).toFixed(1)} ms` : `${Math.round(us)} µs`;

function empty(): Record<Cause, { us: number; evidence: string[] }> {
  return Object.fromEntries(CAUSES.map((c) => [c, { us: 0, evidence: [] as string[] }])) as Record<
    Cause,
    { us: number; evidence: string[] }
  >;
}

/** Host intervals of one operator class on any thread, merged. */
function hostSpans(r: KinetoRank, cls: number, tid?: number): Interval[] {
  const out: Interval[] = [];
  const ts = r.cpu.ts.view(),
    end = r.cpu.end.view(),
    c = r.cpu.cls.view(),
    t = r.cpu.tid.view();
  for (let i = 0; i < ts.length; i++)
    if (c[i] === cls && (tid === undefined || t[i] === tid)) out.push([ts[i]!, end[i]!]);
  return union(out);
}

/**
 * GPU time by cause. Busy time: computation kernels are compute; communication kernels not
 * overlapped by computation are collectives; memcpy/memset alone are memory copies (HTA's
 * compute / non-compute split). Each idle gap of the merged GPU timeline is explained by what the
 * host did, in this order: a recent blocking call made the host wait for the GPU to drain (sync
 * point, up to the time it waited); the training loop was fetching its next batch (input
 * pipeline); the next kernel was launched only after the GPU ran dry or the gap is shorter than
 * HTA's 30 µs launch delay (host-side launch overhead); else the kernel was queued but waited
 * (collectives / peers when the rank communicates, else launch overhead). Pure.
 */
export function attributeGpuTime(p: PreparedRank): TimeAttribution | undefined {
  if (p.kept.length === 0) return undefined;
  const g = p.source.gpu;
  const ts = g.ts.view(),
    end = g.end.view(),
    kind = g.kind.view(),
    corr = g.correlation.view();
  const spans = (k: number): Interval[] =>
    union(p.kept.filter((i) => kind[i] === k).map((i) => [ts[i]!, end[i]!] as Interval));
  // Busy groups exactly as HTA merges them (so idle time is HTA's to the microsecond).
  const merged = mergeIntervals(p.kept, g.ts.view(), g.end.view());
  const busy: Interval[] = merged.start.map((s0, i) => [s0, merged.end[i]!] as Interval);
  const compute = spans(KIND_CODE.computation);
  const comm = subtract(spans(KIND_CODE.communication), compute);
  const total = busy[busy.length - 1]![1] - busy[0]![0];
  const parts = empty();
  parts.compute.us = totalLength(
    mergeIntervals(
      p.kept.filter((i) => kind[i] === KIND_CODE.computation),
      g.ts.view(),
      g.end.view(),
    ),
  );
  parts.collectives.us = length(comm);
  // Profiler artefacts (activities shorter than 1 µs after HTA's rounding) can make the remainder
  // negative by a few µs; it is taken from compute so the parts still add up.
  const memory = totalLength(merged) - parts.compute.us - parts.collectives.us;
  parts['memory-copies'].us = Math.max(0, memory);
  if (memory < 0) parts.compute.us += memory;
  if (parts.collectives.us > 0)
    parts.collectives.evidence.push(
      `${ms(parts.collectives.us)} of communication kernels not overlapped by computation`,
    );
  if (parts['memory-copies'].us > 0)
    parts['memory-copies'].evidence.push(`${ms(parts['memory-copies'].us)} with only memcpy/memset on the GPU`);

  // Host calls that block until the device drains (sorted by end), and DataLoader waits.
  const syncs: Interval[] = [];
  const syncNames = new Map<string, number>();
  const h = p.source.host;
  for (let i = 0; i < h.ts.length; i++) {
    const name = p.source.names.name(h.name.get(i));
    if (SYNC_OP_RE.test(name)) {
      syncs.push([h.ts.get(i), h.end.get(i)]);
      syncNames.set(name, (syncNames.get(name) ?? 0) + 1);
    }
  }
  for (let i = 0; i < p.source.cpu.ts.length; i++)
    if (p.source.cpu.cls.get(i) === CPU_CLASS.sync) syncs.push([p.source.cpu.ts.get(i), p.source.cpu.end.get(i)]);
  syncs.sort((x, y) => x[1] - y[1]);
  for (let i = 1; i < syncs.length; i++)
    if (syncs[i]![0] < syncs[i - 1]![1]) syncs[i] = [syncs[i - 1]![1], Math.max(syncs[i - 1]![1], syncs[i]![1])];
  const loader = hostSpans(p.source, CPU_CLASS.dataLoader);
  const firstStartingAt = new Map<number, number>();
  for (const i of p.kept) if (!firstStartingAt.has(ts[i]!)) firstStartingAt.set(ts[i]!, i);
  const communicates = p.kept.some((i) => kind[i] === KIND_CODE.communication);
  const gaps = { sync: 0, input: 0, launch: 0, queued: 0 };
  // A blocking call that waited for the GPU costs the host its lead: until the GPU again runs
  // longer than that wait without a gap (the host is ahead again), each idle gap, up to the time
  // waited, would have been hidden behind queued GPU work without the call.
  let next = 0,
    waited = 0,
    lastSyncEnd = -Infinity;
  const addSync = (): void => {
    const [s0, e0] = syncs[next++]!;
    waited = Math.max(waited, e0 - s0);
    lastSyncEnd = e0;
  };
  for (let k = 1; k < busy.length; k++) {
    const a = busy[k - 1]![1],
      b = busy[k]![0];
    while (next < syncs.length && syncs[next]![1] <= a) addSync();
    if (a - Math.max(busy[k - 1]![0], lastSyncEnd) > waited) waited = 0;
    while (next < syncs.length && syncs[next]![1] <= b) addSync();
    const syncPart = Math.min(b - a, waited);
    if (syncPart > 0) {
      parts['sync-points'].us += syncPart;
      gaps.sync++;
    }
    const start = a + syncPart;
    if (start >= b) continue;
    const inLoader = length(intersect([[start, b]], loader));
    if (inLoader > 0) {
      parts['input-pipeline'].us += inLoader;
      gaps.input++;
    }
    const rest = b - start - inLoader;
    if (rest <= 0) continue;
    const first = firstStartingAt.get(b);
    const launch = first === undefined ? undefined : p.hostByCorrelation.get(corr[first]!);
    if (launch === undefined || h.ts.get(launch) >= a || rest < CONSECUTIVE_KERNEL_DELAY_US || !communicates) {
      parts['host-overhead'].us += rest;
      gaps.launch++;
    } else {
      parts.collectives.us += rest;
      gaps.queued++;
    }
  }
  const idle = total - totalLength(merged);
  if (gaps.input)
    parts['input-pipeline'].evidence.push(
      `GPU idle ${ms(parts['input-pipeline'].us)} while the training loop waited in enumerate(DataLoader) (${gaps.input} gaps)`,
    );
  if (gaps.sync)
    parts['sync-points'].evidence.push(
      `${gaps.sync} idle gaps begin when a blocking call returns: the host waited for the GPU to ` +
        `drain instead of preparing the next work (${ms(parts['sync-points'].us)} of those gaps, ` +
        `at most the time it waited)`,
      `blocking calls: ${
        [...syncNames.entries()]
          .sort((x, y) => y[1] - x[1])
          .slice(0, 4)
          .map(([n, c]) => `${n} x${c}`)
          .join(', ') || 'aten::item'
      }`,
    );
  if (gaps.launch)
    parts['host-overhead'].evidence.push(
      `${gaps.launch} idle gaps (${ms(parts['host-overhead'].us)}) where the next kernel was ` +
        `launched only after the GPU ran dry, or less than ${CONSECUTIVE_KERNEL_DELAY_US} µs apart ` +
        `(launch latency)`,
    );
  if (gaps.queued)
    parts.collectives.evidence.push(
      `${gaps.queued} idle gaps (${ms(parts.collectives.us - length(comm))}) with the next ` +
        `kernel already queued: waiting on another stream or a peer`,
    );
  parts.compute.evidence.push(`computation kernels ${ms(parts.compute.us)} of ${ms(total)} GPU time; idle ${ms(idle)}`);
  return finish('gpu-time', total, p.iterations.length, parts);
}

/** The thread that runs the training loop: the one holding the ProfilerStep spans, else the busiest. */
function mainThread(r: KinetoRank): number | undefined {
  const busy = new Map<number, number>();
  const cls = r.cpu.cls.view(),
    tid = r.cpu.tid.view(),
    ts = r.cpu.ts.view(),
    end = r.cpu.end.view();
  for (let i = 0; i < ts.length; i++) if (cls[i] === CPU_CLASS.step) return tid[i];
  for (let i = 0; i < ts.length; i++) busy.set(tid[i]!, (busy.get(tid[i]!) ?? 0) + end[i]! - ts[i]!);
  return [...busy.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/**
 * Step time of a CPU-only run by cause, on the training thread within each profiler step (the
 * last step, often cut short, is left out when there are several): enumerate(DataLoader) is the
 * input pipeline; collectives and blocking calls are what their names say; other operators
 * (forward, backward, optimizer) are compute; time inside the step covered by no operator is
 * host-side overhead (Python, framework dispatch, per-step fixed costs). The uncovered time after
 * the step's optimizer.step() (`Optimizer.step#...`) is the script's own code between steps
 * (`.item()`, waits on other threads, logging; the SDK's step log measures it as
 * `between_steps_s`): it is the synchronisation-points cause when it is longer than the uncovered
 * time in the rest of the step, i.e. concentrated at the step boundary, as one wait is, rather
 * than Python overhead spread over the step (batch size 1), which stays host overhead. Pure.
 */
export function attributeCpuSteps(r: KinetoRank): TimeAttribution | undefined {
  const tid = mainThread(r);
  if (tid === undefined) return undefined;
  const ts = r.cpu.ts.view(),
    end = r.cpu.end.view(),
    cls = r.cpu.cls.view(),
    tids = r.cpu.tid.view();
  let windows: Interval[] = union(
    [...new Map(r.steps.map((s) => [s.iteration, s])).values()].map((s) => [s.ts_us, s.end_us] as Interval),
  );
  if (windows.length >= 2) windows = windows.slice(0, -1);
  if (windows.length === 0) {
    let first = Infinity,
      last = -Infinity;
    for (let i = 0; i < ts.length; i++)
      if (tids[i] === tid) {
        first = Math.min(first, ts[i]!);
        last = Math.max(last, end[i]!);
      }
    if (!(last > first)) return undefined;
    windows = [[first, last]];
  }
  const spansOf = (keep: (c: number) => boolean): Interval[] => {
    const out: Interval[] = [];
    for (let i = 0; i < ts.length; i++) if (tids[i] === tid && keep(cls[i]!)) out.push([ts[i]!, end[i]!]);
    return intersect(union(out), windows);
  };
  const input = spansOf((c) => c === CPU_CLASS.dataLoader);
  const coll = subtract(
    spansOf((c) => c === CPU_CLASS.collective),
    input,
  );
  const sync = subtract(
    subtract(
      spansOf((c) => c === CPU_CLASS.sync),
      input,
    ),
    coll,
  );
  // A script's own record_function spans mark regions, not work (CPU_CLASS.annotation).
  const covered = spansOf((c) => c !== CPU_CLASS.step && c !== CPU_CLASS.annotation);
  // The training thread idle while a communication thread runs a collective (DDP's gloo all-reduce) waits on peers.
  const otherColl: Interval[] = [];
  for (let i = 0; i < ts.length; i++)
    if (tids[i] !== tid && cls[i] === CPU_CLASS.collective) otherColl.push([ts[i]!, end[i]!]);
  const waitingOnPeers = intersect(subtract(windows, covered), union(otherColl));
  // After the last optimizer.step() of each step window until the window ends.
  const afterOptimizer: Interval[] = [];
  const optimizer = spansOf((c) => c === CPU_CLASS.optimizer);
  for (const w of windows) {
    let last = -Infinity;
    for (const o of optimizer) if (o[1] > w[0] && o[1] <= w[1]) last = Math.max(last, o[1]);
    if (Number.isFinite(last) && last < w[1]) afterOptimizer.push([last, w[1]]);
  }
  const between = length(subtract(subtract(afterOptimizer, covered), waitingOnPeers));
  const total = length(windows);
  const uncovered = total - length(covered) - length(waitingOnPeers);
  const concentrated = between > uncovered - between;
  const parts = empty();
  parts['input-pipeline'].us = length(input);
  parts.collectives.us = length(coll) + length(waitingOnPeers);
  parts['sync-points'].us = length(sync) + (concentrated ? between : 0);
  parts['host-overhead'].us = uncovered - (concentrated ? between : 0);
  parts.compute.us =
    total - parts['input-pipeline'].us - parts.collectives.us - parts['sync-points'].us - parts['host-overhead'].us;
  const n = windows.length;
  const per = (us: number) => `${ms(us / n)} per step`;
  parts['input-pipeline'].evidence.push(
    `enumerate(DataLoader) on the training thread: ${per(parts['input-pipeline'].us)} of ${per(total)}`,
  );
  if (parts.collectives.us > 0)
    parts.collectives.evidence.push(
      `collective calls on the training thread ${per(length(coll))}; training thread idle while ` +
        `another thread runs a collective ${per(length(waitingOnPeers))}`,
    );
  if (length(sync) > 0)
    parts['sync-points'].evidence.push(`blocking calls (.item(), synchronize): ${per(length(sync))}`);
  const betweenText =
    `no operator runs on the training thread from the end of optimizer.step() to the next ` +
    `step: ${per(between)} in the script's own code between steps`;
  if (concentrated && between > 0)
    parts['sync-points'].evidence.push(
      `${betweenText}, more than the ${per(uncovered - between)} without operators in the rest ` +
        `of the step (where .item(), waits on other threads, logging sit; synchronisation or host ` +
        `work, the trace cannot tell which)`,
    );
  parts['host-overhead'].evidence.push(
    `time inside the step covered by no operator (Python, dispatch, per-step fixed costs): ` +
      `${per(parts['host-overhead'].us)}` +
      `${!concentrated && between > 0 ? `, of which ${per(between)} after optimizer.step() (spread over the step, not one wait at its end)` : ''}`,
  );
  const opt = length(
    subtract(
      spansOf((c) => c === CPU_CLASS.optimizer),
      input,
    ),
  );
  parts.compute.evidence.push(
    `operators (forward, backward, optimizer): ${per(parts.compute.us)}, of which optimizer ${per(opt)}`,
  );
  return finish('step-time', total, n, parts);
}
