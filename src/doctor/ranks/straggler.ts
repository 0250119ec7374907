/**
 * The live straggler verdict: a rank whose own work per step (data wait, compute, time between
 * steps: everything but waiting on peers) is persistently above its peers'. In a synchronous job
 * every rank waits for the slowest in the gradient collective, so one slow rank sets every
 * step's pace. Pure.
 *
 * Robust by construction: per time bucket, the candidate's excess over the median of the other
 * ranks must pass a relative floor, an absolute floor and, with at least `mad_min_peers` others,
 * k x 1.4826 x MAD of the others; the same rank must be flagged in at least `need` of the last
 * `buckets` buckets (no other rank in any), and its excess over the whole window must pass the
 * floors too. One noisy bucket (a checkpoint, a GC pause, a neighbour's burst) names no one, and
 * one quiet bucket does not clear a rank that is slow over the window.
 */
import { mad, median, rankName, type RankVerdict, type RankWindow } from './rank-state.js';

/** The phase of a step that makes a rank slow. */
export type SlowPhase = 'data' | 'compute' | 'between';

/** Thresholds of the straggler verdict (docs/doctor.md, "Live verdicts across ranks"). */
export interface StragglerOptions {
  /** Length of one bucket (s); default 4 (two summaries of a rank at its default 2 s interval). */
  readonly bucket_s?: number;
  /** Buckets of the window the verdict reads; default 3 (12 s). */
  readonly buckets?: number;
  /** Of these, buckets the same rank must be flagged in; default 2. */
  readonly need?: number;
  /** Robust z: excess > k x 1.4826 x MAD of the others; default 5. */
  readonly mad_k?: number;
  /**
   * Others needed for the MAD term; default 4. With fewer, the MAD is half the gap between two
   * peers (or the middle of three gaps): real healthy runs of 3 ranks showed robust z up to 155
   * and busy-thread stragglers as low as 1.2 (docs/doctor.md); the floors and the persistence decide.
   */
  readonly mad_min_peers?: number;
  /** Excess must be at least this fraction of the others' median own work; default 0.25. */
  readonly rel_floor?: number;
  /** ... and at least this many seconds per step; default 0.005. */
  readonly abs_floor_s?: number;
}

/** A named straggler. */
export interface StragglerVerdict {
  readonly rank: number;
  readonly node: string;
  readonly device: number | null;
  readonly phase: SlowPhase;
  /** Its own work per step and the median of the others' (s), over the buckets. */
  readonly own_step_s: number;
  readonly peers_own_step_s: number;
  /** Step time of the job now and without the straggler (s/step). */
  readonly job_step_s: number;
  /** How much slower the job runs than without it (%). */
  readonly slowdown_pct: number;
  readonly line: string;
}

interface Sums {
  steps: number;
  data: number;
  compute: number;
  sync: number;
  between: number;
}

function sums(windows: readonly RankWindow[], from_ms: number, to_ms: number): Sums {
  const s: Sums = { steps: 0, data: 0, compute: 0, sync: 0, between: 0 };
  for (const w of windows) {
    if (w.received_ms <= from_ms || w.received_ms > to_ms) continue;
    s.steps += w.steps;
    s.data += w.data_wait_s;
    s.compute += w.compute_s;
    s.sync += w.sync_s;
    s.between += w.between_s;
  }
  return s;
}

const own = (s: Sums) => (s.data + s.compute + s.between) / s.steps;

/** The rank flagged in one bucket, or undefined (no steady data, or nobody stands out). */
function flagged(per: readonly Sums[], o: Required<StragglerOptions>): number | undefined {
  if (per.length < 2) return undefined;
  const owns = per.map(own);
  let worst = 0;
  for (let i = 1; i < owns.length; i++) if (owns[i]! > owns[worst]!) worst = i;
  const others = owns.filter((_, i) => i !== worst);
  const m = median(others);
  const spread = others.length >= o.mad_min_peers ? o.mad_k * 1.4826 * mad(others) : 0;
  return owns[worst]! - m > Math.max(spread, floor(m, o)) ? worst : undefined;
}

/** The least excess over the others' median own work `m` that counts: the relative and absolute floors. */
function floor(m: number, o: Required<StragglerOptions>): number {
  return Math.max(o.rel_floor * m, o.abs_floor_s);
}

const DEFAULTS: Required<StragglerOptions> = {
  bucket_s: 4,
  buckets: 3,
  need: 2,
  mad_k: 5,
  mad_min_peers: 4,
  rel_floor: 0.25,
  abs_floor_s: 0.005,
};

/**
 * The straggler among `ranks` at `now_ms`, or null: none, fewer than two ranks, or reports not
 * steady yet (every rank must have finished steps in each of the last `buckets` buckets). Pure.
 */
export const stragglerVerdict: RankVerdict<StragglerOptions, StragglerVerdict> = (ranks, now_ms, options = {}) => {
  const o = { ...DEFAULTS, ...options };
  if (ranks.length < 2) return null;
  const bucket_ms = o.bucket_s * 1000;
  let who: number | undefined;
  let times = 0;
  for (let b = 0; b < o.buckets; b++) {
    const to = now_ms - b * bucket_ms;
    const per = ranks.map((r) => sums(r.windows, to - bucket_ms, to));
    if (per.some((s) => s.steps === 0)) return null; // not steady: every rank steps in every bucket
    const i = flagged(per, o);
    if (i === undefined) continue;
    if (who !== undefined && i !== who) return null; // two ranks take turns: no one stands out
    who = i;
    times++;
  }
  if (who === undefined || times < o.need) return null;
  const from = now_ms - o.buckets * bucket_ms;
  const all = ranks.map((r) => sums(r.windows, from, now_ms));
  const mine = all[who]!;
  const others = all.filter((_, i) => i !== who);
  // Over the whole window too: the rank is the slowest and above the floors (not one big bucket).
  const own_step_s = own(mine);
  const peers_own_step_s = median(others.map(own));
  if (others.some((s) => own(s) >= own_step_s) || own_step_s - peers_own_step_s <= floor(peers_own_step_s, o))
    return null;
  const per = (s: Sums, k: 'data' | 'compute' | 'between') => s[k] / s.steps;
  const excess = (k: 'data' | 'compute' | 'between') => per(mine, k) - median(others.map((s) => per(s, k)));
  const phases: SlowPhase[] = ['data', 'compute', 'between'];
  const phase = phases.reduce((a, b) => (excess(b) > excess(a) ? b : a));
  // Every rank's step lasts as long as the slowest's (the others wait in sync): the job's step is
  // the median total; without the straggler it would be shorter by its excess.
  const job_step_s = median(all.map((s) => (s.data + s.compute + s.sync + s.between) / s.steps));
  const extra_s = own_step_s - peers_own_step_s;
  const without_s = Math.max(job_step_s - extra_s, peers_own_step_s, 1e-9);
  const slowdown_pct = (100 * extra_s) / without_s;
  const r = ranks[who]!;
  const what =
    phase === 'data' ? 'waits on data' : phase === 'compute' ? 'computes' : 'runs its own code between steps';
  const fix =
    phase === 'data'
      ? 'check its data source and loader workers'
      : phase === 'compute'
        ? 'check its device and what else runs on its CPU cores or GPU (a neighbour, throttling)'
        : 'check what the script does after optimizer.step() on that rank (logging, evaluation, syncs)';
  const line =
    `straggler: ${rankName(r)} ${what} ${ms(extra_s)} ms longer per step than its peers ` +
    `(own work ${ms(own_step_s)} ms vs ${ms(peers_own_step_s)} ms, last ${o.buckets * o.bucket_s} s); ` +
    `the others wait for it: the job runs ${slowdown_pct.toFixed(0)}% slower than without it; ${fix}`;
  return {
    rank: r.rank,
    node: r.node,
    device: r.device,
    phase,
    own_step_s,
    peers_own_step_s,
    job_step_s,
    slowdown_pct,
    line,
  };
};

const ms = (s: number) => (s * 1000).toFixed(s >= 0.1 ? 0 : 1);
