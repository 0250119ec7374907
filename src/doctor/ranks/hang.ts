/**
 * The live hang verdict: the job makes no progress (no rank finished a step for longer than
 * max(`stall_min_s`, `stall_steps` x its step time)) and one rank is to blame while its peers
 * wait for it in the step's collective. Pure.
 *
 * Which rank, in order of evidence:
 *  1. `silent`: it stopped sending summaries (its reporting thread runs beside training, so a
 *     rank blocked in a collective keeps reporting; a stopped, frozen or dead process does not)
 *     while the others still send theirs;
 *  2. `behind`: its step counter is below the others' (they finished a step it never did);
 *  3. `outside-step`: it runs its own code between steps while the others are inside a step
 *     (waiting in its collective).
 * When every rank waits inside the same step (a collective all of them entered), no single rank
 * is to blame from the summaries: null, and the job-level hung timeout still applies.
 */
import { median, rankName, stepTime_s, type RankState, type RankVerdict } from './rank-state.js';

/** Thresholds of the hang verdict (docs/doctor.md, "Live verdicts across ranks"). */
export interface HangOptions {
  /** Least time with no progress before any verdict (s); default 20. */
  readonly stall_min_s?: number;
  /** ... and at least this many typical step times; default 5. */
  readonly stall_steps?: number;
  /** A rank unheard for this long is silent (s); default 10 (five of its 2 s summaries). */
  readonly silent_s?: number;
}

export type HangEvidence = 'silent' | 'behind' | 'outside-step';

/** A named hung rank. */
export interface HangVerdict {
  readonly rank: number;
  readonly node: string;
  readonly device: number | null;
  readonly evidence: HangEvidence;
  /** Seconds since any rank last finished a step. */
  readonly stalled_s: number;
  /** What the other ranks do, in words. */
  readonly peers: string;
  readonly line: string;
}

const DEFAULTS: Required<HangOptions> = { stall_min_s: 20, stall_steps: 5, silent_s: 10 };

/** The hung rank among `ranks` at `now_ms`, or null (progressing, or no single rank to blame). Pure. */
export const hangVerdict: RankVerdict<HangOptions, HangVerdict> = (ranks, now_ms, options = {}) => {
  const o = { ...DEFAULTS, ...options };
  if (ranks.length < 2 || ranks.some((r) => r.progress_ms === null)) return null;
  const last_progress_ms = Math.max(...ranks.map((r) => r.progress_ms!));
  const stalled_s = (now_ms - last_progress_ms) / 1000;
  const typical = median(ranks.map((r) => stepTime_s(r.windows)).filter((x): x is number => x !== null));
  const limit_s = Math.max(o.stall_min_s, o.stall_steps * (Number.isFinite(typical) ? typical : 0));
  if (stalled_s < limit_s) return null;
  const silent = (r: RankState) => now_ms - r.last_heard_ms > o.silent_s * 1000;
  const pick = (): [RankState, HangEvidence] | undefined => {
    const quiet = ranks.filter(silent);
    if (quiet.length > 0 && quiet.length < ranks.length) {
      const first = quiet.reduce((a, b) => (b.last_heard_ms < a.last_heard_ms ? b : a));
      return [first, 'silent'];
    }
    if (quiet.length > 0) return undefined; // nobody reports: the control plane cannot tell who
    const top = Math.max(...ranks.map((r) => r.step));
    const behind = ranks.filter((r) => r.step < top);
    if (behind.length === 1) return [behind[0]!, 'behind'];
    const outside = ranks.filter((r) => r.phase === 'between');
    if (outside.length === 1 && ranks.filter((r) => r.phase === 'step').length === ranks.length - 1)
      return [outside[0]!, 'outside-step'];
    return undefined;
  };
  const found = pick();
  if (!found) return null;
  const [r, evidence] = found;
  const peers = ranks
    .filter((p) => p.rank !== r.rank)
    .map((p) => `rank ${p.rank} ${p.phase === 'step' ? 'waits inside step' : 'is between steps after step'} ${p.step}`)
    .join(', ');
  const why =
    evidence === 'silent'
      ? `has sent nothing for ${((now_ms - r.last_heard_ms) / 1000).toFixed(0)} s (stopped, frozen or dead)`
      : evidence === 'behind'
        ? `is at step ${r.step}, behind its peers`
        : `runs its own code between steps for ${r.phase_s.toFixed(0)} s`;
  const line =
    `hung: ${rankName(r)} ${why}; no rank finished a step for ${stalled_s.toFixed(0)} s ` +
    `(limit ${limit_s.toFixed(0)} s); ${peers}`;
  return { rank: r.rank, node: r.node, device: r.device, evidence, stalled_s, peers, line };
};
