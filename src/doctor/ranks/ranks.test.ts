import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Random } from '../../core/random.js';
import { hangVerdict } from './hang.js';
import type { RankState, RankWindow } from './rank-state.js';
import { stragglerVerdict } from './straggler.js';

/** Per-step phases of one rank (s). */
interface Pace {
  data?: number;
  compute?: number;
  between?: number;
  /** Relative noise per window (uniform +-). */
  noise?: number;
}

/**
 * Ranks that post a summary every 2 s for `seconds` up to `now_ms`, in lockstep: every rank's
 * step lasts the slowest rank's own work plus a 10 ms collective; each waits the difference in sync.
 */
function lockstep(paces: readonly Pace[], seconds: number, now_ms: number, seed = 1): RankState[] {
  const rng = new Random(seed);
  const windows: RankWindow[][] = paces.map(() => []);
  for (let t = now_ms - seconds * 1000 + 2000; t <= now_ms; t += 2000) {
    const owns = paces.map((p) => {
      const k = 1 + (p.noise ?? 0.05) * (2 * rng.next() - 1);
      return { data: (p.data ?? 0.01) * k, compute: (p.compute ?? 0.1) * k, between: (p.between ?? 0.002) * k };
    });
    const step = Math.max(...owns.map((x) => x.data + x.compute + x.between)) + 0.01;
    const steps = Math.floor(2 / step);
    owns.forEach((x, i) => {
      const own = x.data + x.compute + x.between;
      windows[i]!.push({
        received_ms: t - i * 37, // ranks post out of phase
        steps,
        data_wait_s: x.data * steps,
        compute_s: x.compute * steps,
        between_s: x.between * steps,
        sync_s: (step - own) * steps,
      });
    });
  }
  return paces.map((_, i) => ({
    rank: i,
    node: 'n0',
    device: i,
    windows: windows[i]!,
    last_heard_ms: now_ms - i * 37,
    step: 100,
    progress_ms: now_ms - i * 37,
    phase: 'step',
    phase_s: 0.05,
  }));
}

const NOW = 1_000_000;

describe('stragglerVerdict', () => {
  it('names a rank whose compute is slower, with the phase and the cost to the job', () => {
    const v = stragglerVerdict(lockstep([{}, { compute: 0.25 }, {}], 20, NOW), NOW);
    assert.ok(v);
    assert.equal(v.rank, 1);
    assert.equal(v.device, 1);
    assert.equal(v.phase, 'compute');
    // job step ~0.272 s, without it ~0.122 s: about 120% slower
    assert.ok(v.slowdown_pct > 90 && v.slowdown_pct < 150, `${v.slowdown_pct}`);
    assert.match(v.line, /rank 1 \(node n0, device 1\) computes .* slower than without it/);
  });

  it('names the slow phase: data wait, time between steps', () => {
    assert.equal(stragglerVerdict(lockstep([{}, {}, {}, { data: 0.08 }], 20, NOW), NOW)?.phase, 'data');
    const between = stragglerVerdict(lockstep([{ between: 0.15 }, {}, {}], 20, NOW), NOW);
    assert.equal(between?.rank, 0);
    assert.equal(between?.phase, 'between');
  });

  it('needs persistence: a rank slow in the last bucket only is not named', () => {
    const ranks = lockstep([{}, {}, {}], 20, NOW);
    const slowLast = ranks.map((r, i) =>
      i !== 2
        ? r
        : {
            ...r,
            windows: r.windows.map((w) => (w.received_ms > NOW - 4000 ? { ...w, compute_s: w.compute_s * 3 } : w)),
          },
    );
    assert.equal(stragglerVerdict(slowLast, NOW), null);
  });

  /** `ranks` with rank `who`'s own work scaled by `k` in the windows received in (from, to] before NOW (s). */
  const slowIn = (ranks: RankState[], who: number, k: number, from_s: number, to_s: number): RankState[] =>
    ranks.map((r, i) =>
      i !== who
        ? r
        : {
            ...r,
            windows: r.windows.map((w) =>
              w.received_ms > NOW - from_s * 1000 && w.received_ms <= NOW - to_s * 1000
                ? { ...w, compute_s: w.compute_s * k, data_wait_s: w.data_wait_s * k, between_s: w.between_s * k }
                : w,
            ),
          },
    );

  it('names a rank slow in 2 of the 3 buckets (one quiet bucket does not clear it), not in 1', () => {
    const ranks = lockstep([{}, {}, {}], 20, NOW);
    // 2x slower for the last 12 s but for the middle bucket (8-4 s ago): a neighbour's pause
    const gap = slowIn(slowIn(ranks, 1, 2, 12, 8), 1, 2, 4, 0);
    assert.equal(stragglerVerdict(gap, NOW)?.rank, 1);
    assert.equal(stragglerVerdict(slowIn(ranks, 1, 2, 4, 0), NOW), null);
  });

  it('one big bucket does not name a rank: its excess over the window must pass the floors too', () => {
    const ranks = lockstep([{}, {}, {}], 20, NOW);
    // 33% slower in 2 buckets, itself in the third: 22% over the window, under the 25% floor
    assert.equal(stragglerVerdict(slowIn(slowIn(ranks, 2, 1.33, 12, 8), 2, 1.33, 4, 0), NOW), null);
  });

  it('names no one when two ranks take turns being slow', () => {
    const ranks = slowIn(slowIn(lockstep([{}, {}, {}], 20, NOW), 0, 2, 12, 4), 2, 2, 4, 0);
    assert.equal(stragglerVerdict(ranks, NOW), null);
  });

  it("with 3 ranks the peers' gap does not veto: 40% slower while the two others differ by 12%", () => {
    // A MAD of two values is half their gap: 5 x 1.4826 x 6% = 44% would hide the straggler.
    const v = stragglerVerdict(lockstep([{ compute: 0.094 }, { compute: 0.106 }, { compute: 0.14 }], 20, NOW, 3), NOW);
    assert.equal(v?.rank, 2);
    // With 5 others the MAD term applies: a rank 45% above peers spread from 0.06 to 0.14 s is not named.
    const spread = [0.06, 0.08, 0.1, 0.12, 0.14].map((compute) => ({ compute, noise: 0 }));
    const six = lockstep([...spread, { compute: 0.145, noise: 0 }], 20, NOW);
    assert.equal(stragglerVerdict(six, NOW), null);
    assert.equal(stragglerVerdict(six, NOW, { mad_min_peers: 99 })?.rank, 5);
  });

  it('needs steady reports: nothing before every rank reported in every bucket', () => {
    assert.equal(stragglerVerdict(lockstep([{}, { compute: 0.3 }], 6, NOW), NOW), null);
    assert.equal(stragglerVerdict(lockstep([{}, { compute: 0.3 }], 14, NOW), NOW)?.rank, 1);
  });

  it('no false alarm on healthy runs with 15% noise (1000 seeds, 2 to 64 ranks)', () => {
    let alarms = 0;
    for (let seed = 1; seed <= 1000; seed++) {
      const n = 2 + (seed % 63);
      const ranks = lockstep(
        Array.from({ length: n }, () => ({ noise: 0.15 })),
        20,
        NOW,
        seed,
      );
      if (stragglerVerdict(ranks, NOW) !== null) alarms++;
    }
    assert.equal(alarms, 0);
  });

  it('no false alarm when one healthy rank is persistently 10% slower, with 15% noise (1000 seeds)', () => {
    let alarms = 0;
    for (let seed = 1; seed <= 1000; seed++) {
      const n = 2 + (seed % 63);
      const paces = Array.from({ length: n }, (_, i) => ({ noise: 0.15, compute: i === 0 ? 0.11 : 0.1 }));
      if (stragglerVerdict(lockstep(paces, 20, NOW, seed), NOW) !== null) alarms++;
    }
    assert.equal(alarms, 0);
  });
});

function stalled(over: Partial<RankState>[], stall_s: number): RankState[] {
  return lockstep(
    over.map(() => ({})),
    20,
    NOW - stall_s * 1000,
  ).map((r, i) => ({ ...r, last_heard_ms: NOW - 1000, progress_ms: NOW - stall_s * 1000, ...over[i] }));
}

describe('hangVerdict', () => {
  it('names the rank that went silent while its peers wait (SIGSTOP)', () => {
    const v = hangVerdict(stalled([{}, { last_heard_ms: NOW - 25_000 }, {}], 25), NOW);
    assert.equal(v?.rank, 1);
    assert.equal(v?.evidence, 'silent');
    assert.match(v!.line, /rank 1 \(node n0, device 1\) has sent nothing for 25 s/);
    assert.match(v!.peers, /rank 0 waits inside step 100, rank 2 waits inside step 100/);
  });

  it('names the rank behind its peers, or the one outside the step', () => {
    assert.equal(hangVerdict(stalled([{}, {}, { step: 99 }], 30), NOW)?.evidence, 'behind');
    const outside = hangVerdict(stalled([{ phase: 'between', phase_s: 30 }, {}, {}], 30), NOW);
    assert.equal(outside?.rank, 0);
    assert.equal(outside?.evidence, 'outside-step');
  });

  it('waits for max(20 s, 5 steps) of no progress', () => {
    const quiet = [{}, { last_heard_ms: NOW - 15_000 }, {}];
    assert.equal(hangVerdict(stalled(quiet, 15), NOW), null);
    assert.equal(hangVerdict(stalled(quiet, 21), NOW)?.rank, 1);
    // 5 s steps: 25 s
    const slow = stalled(quiet, 21).map((r) => ({
      ...r,
      windows: r.windows.map((w) => ({ ...w, steps: 1, data_wait_s: 0, between_s: 0, sync_s: 0, compute_s: 5 })),
    }));
    assert.equal(hangVerdict(slow, NOW), null);
    assert.equal(hangVerdict(slow, NOW + 4500)?.rank, 1);
  });

  it('names no one when every rank waits in the same step, or none reports', () => {
    assert.equal(hangVerdict(stalled([{}, {}, {}], 60), NOW), null);
    const all = [{ last_heard_ms: NOW - 50_000 }, { last_heard_ms: NOW - 50_000 }];
    assert.equal(hangVerdict(stalled(all, 60), NOW), null);
  });

  it('no verdict while the job progresses, or before every rank finished a step', () => {
    assert.equal(hangVerdict(stalled([{}, { last_heard_ms: NOW - 25_000 }, {}], 1), NOW), null);
    assert.equal(hangVerdict(stalled([{}, { progress_ms: null, last_heard_ms: NOW - 25_000 }], 60), NOW), null);
  });
});
