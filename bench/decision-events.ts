/**
 * What a job's events say about its decisions (issue #51's live acceptance): its replica counts
 * over time, how often it changed direction, and the largest gain its batch-size events claimed
 * for small changes. Read by bench/live-decisions.ts and the heavy e2e test; pure.
 */

/** The part of a stored or served event this reads. */
export interface DecisionEvent {
  kind: string;
  reason: string;
  at_ms: number;
  data: Record<string, unknown>;
}

/** One allocation change: from and to replica counts (0: none). */
export interface SizeChange {
  at_ms: number;
  from: number;
  to: number;
  reason: string;
}

/** One batch-size change with the gain its event claimed. */
export interface BatchClaim {
  at_ms: number;
  from_total: number;
  to_total: number;
  /** |to / from - 1|. */
  change: number;
  /** The claimed predicted goodput ratio; undefined when the event claims none. */
  claimed?: number;
  reason: string;
}

/** Rescale events (the scheduler's allocation changes), with their sizes parsed from "from -> to". */
export function sizeChanges(events: readonly DecisionEvent[]): SizeChange[] {
  const out: SizeChange[] = [];
  for (const e of events) {
    if (e.kind !== 'rescale') continue;
    const m = /\b(\d+) -> (\d+)\b/.exec(e.reason);
    if (m) out.push({ at_ms: e.at_ms, from: Number(m[1]), to: Number(m[2]), reason: e.reason });
  }
  return out;
}

/**
 * Direction changes among resizes between two positive sizes: each grow that follows a shrink
 * or shrink that follows a grow (stops and starts are not resizes).
 */
export function directionChanges(changes: readonly SizeChange[]): number {
  let last = 0;
  let count = 0;
  for (const c of changes) {
    if (c.from === 0 || c.to === 0 || c.from === c.to) continue;
    const sign = c.to > c.from ? 1 : -1;
    if (last !== 0 && sign !== last) count += 1;
    last = sign;
  }
  return count;
}

/** Batch-size events with their totals (event data) and the ratio their reason claims. */
export function batchClaims(events: readonly DecisionEvent[]): BatchClaim[] {
  const out: BatchClaim[] = [];
  for (const e of events) {
    if (e.kind !== 'batch-size') continue;
    const from = (e.data.from as { total?: number } | undefined)?.total;
    const to = (e.data.to as { total?: number } | undefined)?.total;
    if (!from || !to) continue;
    const m = /predicted goodput x(\d+(?:\.\d+)?)/.exec(e.reason);
    out.push({
      at_ms: e.at_ms,
      from_total: from,
      to_total: to,
      change: Math.abs(to / from - 1),
      ...(m ? { claimed: Number(m[1]) } : {}),
      reason: e.reason,
    });
  }
  return out;
}

/** The largest claimed gain among batch changes smaller than `below` (e.g. 0.10); 0 when none. */
export function largestSmallChangeClaim(claims: readonly BatchClaim[], below: number): number {
  return claims.filter((c) => c.change < below && c.claimed !== undefined).reduce((m, c) => Math.max(m, c.claimed!), 0);
}
