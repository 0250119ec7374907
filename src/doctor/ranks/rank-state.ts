/**
 * What the live rank verdicts (straggler.ts, hang.ts) read of a job's ranks: each rank's recent
 * step summaries as the control plane received them, and when it last heard from the rank and
 * saw it progress. Plain data on the control plane's clock (never the replicas' clocks, which may
 * differ between nodes). Pure; no schema library, so the dashboard can bundle it.
 */

/** One rank's summary of the steps it finished since its previous one (sums, seconds). */
export interface RankWindow {
  /** When the control plane received it (ms, its clock). */
  readonly received_ms: number;
  /** Steps finished in the window (0: a heartbeat with no progress). */
  readonly steps: number;
  readonly data_wait_s: number;
  /** Forward+backward and the optimizer: the rank's own compute. */
  readonly compute_s: number;
  /** Waiting on peers in the gradient collective (what the others' slowness costs this rank). */
  readonly sync_s: number;
  /** The script's own time after optimizer.step() until the next step. */
  readonly between_s: number;
}

/** Where a rank was when it last reported: inside a step (data, compute or sync), or between steps. */
export type RankPhase = 'step' | 'between' | 'idle';

/** A rank as the control plane last saw it. */
export interface RankState {
  readonly rank: number;
  /** Node name and device index it runs on ('' / null when unknown). */
  readonly node: string;
  readonly device: number | null;
  /** Recent windows, oldest first (bounded by the keeper). */
  readonly windows: readonly RankWindow[];
  /** When its last summary arrived (ms). */
  readonly last_heard_ms: number;
  /** Its step counter in the last summary (-1 before its first finished step). */
  readonly step: number;
  /** When its step counter last advanced (ms); null before its first finished step. */
  readonly progress_ms: number | null;
  readonly phase: RankPhase;
  /** How long it had been in `phase` when it sent its last summary (s). */
  readonly phase_s: number;
}

/**
 * A live verdict over a job's ranks (hang.ts, straggler.ts): the rank it names among `ranks` at
 * `now_ms`, or null when there is none (fewer than two ranks, reports not steady, nobody to
 * blame). Options left out take the verdict's defaults. Pure.
 */
export type RankVerdict<Options, Verdict> = (
  ranks: readonly RankState[],
  now_ms: number,
  options?: Options,
) => Verdict | null;

/** Median of a non-empty list (NaN for an empty one). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Median absolute deviation (unscaled). */
export function mad(xs: readonly number[]): number {
  const m = median(xs);
  return median(xs.map((x) => Math.abs(x - m)));
}

/** "rank 2 (node a, device 1)". */
export function rankName(r: Pick<RankState, 'rank' | 'node' | 'device'>): string {
  const where = [r.node !== '' ? `node ${r.node}` : '', r.device !== null ? `device ${r.device}` : '']
    .filter((s) => s !== '')
    .join(', ');
  return `rank ${r.rank}${where ? ` (${where})` : ''}`;
}

/** Seconds per step of a rank over its windows (data + compute + sync + between), or null without steps. */
export function stepTime_s(windows: readonly RankWindow[]): number | null {
  let steps = 0;
  let total = 0;
  for (const w of windows) {
    steps += w.steps;
    total += w.data_wait_s + w.compute_s + w.sync_s + w.between_s;
  }
  return steps > 0 ? total / steps : null;
}
