/** How late one rank was, over all tensor negotiations of a Horovod timeline. */
export interface HorovodRankDelay {
  readonly rank: number;
  /** Negotiations this rank took part in. */
  readonly negotiations: number;
  /** Mean and max time (µs) from the first rank's readiness to this rank's, per negotiation. */
  readonly mean_delay_us: number;
  readonly max_delay_us: number;
  /** Negotiations in which this rank was the last one ready (the others waited for it). */
  readonly times_last: number;
}

/** Summary of a Horovod timeline (`HOROVOD_TIMELINE=...`). */
export interface HorovodTimeline {
  readonly events: number;
  readonly tensors: number;
  readonly cycles: number;
  /** True when the JSON array was not closed (Horovod writes it while running). */
  readonly truncated: boolean;
  readonly ranks: HorovodRankDelay[];
  /** Total µs per activity: NEGOTIATE_ALLREDUCE, WAIT_FOR_DATA, ALLREDUCE / NCCL_ALLREDUCE, MEMCPY_IN_FUSION_BUFFER ... */
  readonly phase_us: Record<string, number>;
}

interface HvdEvent {
  ph?: unknown;
  name?: unknown;
  ts?: unknown;
  dur?: unknown;
  pid?: unknown;
}

/** Parses possibly unterminated timeline JSON: whole-array first, then one event per line. */
function readEvents(text: string): { events: HvdEvent[]; truncated: boolean } {
  const trimmed = text.trim();
  const closed = trimmed.endsWith(']');
  try {
    const repaired = closed ? trimmed : trimmed.replace(/,\s*$/, '') + ']';
    const parsed: unknown = JSON.parse(repaired);
    if (Array.isArray(parsed)) return { events: parsed as HvdEvent[], truncated: !closed };
  } catch {
    // fall through to the line-by-line reader: a crash can cut an event in half
  }
  const events: HvdEvent[] = [];
  for (const line of trimmed.split(/\r?\n/)) {
    const t = line.trim().replace(/^\[/, '').replace(/,$/, '').replace(/\]$/, '');
    if (!t.startsWith('{')) continue;
    try {
      events.push(JSON.parse(t) as HvdEvent);
    } catch {
      // a torn last line: skip it
    }
  }
  return { events, truncated: true };
}

/** True when text looks like a Horovod timeline (a trace array with Horovod activity names). */
export function looksLikeHorovodTimeline(head: string): boolean {
  return (
    /^\s*\[/.test(head) && /NEGOTIATE_|CYCLE_START|HorovodAllreduce|MEMCPY_IN_FUSION_BUFFER|WAIT_FOR_DATA/.test(head)
  );
}

/** Pure. Ticks (X events named by a rank number) inside a tensor's negotiation mark when each rank was ready. */
export function parseHorovodTimeline(text: string): HorovodTimeline {
  const { events, truncated } = readEvents(text);
  const open = new Map<number, { name: string; ts: number }[]>();
  const phase: Record<string, number> = {};
  const rounds = new Map<number, { ticks: Map<number, number> }[]>();
  const tensors = new Set<number>();
  let cycles = 0;
  const currentRound = (pid: number) => {
    let list = rounds.get(pid);
    if (!list) rounds.set(pid, (list = [{ ticks: new Map() }]));
    return list[list.length - 1]!;
  };
  for (const e of events) {
    const pid = typeof e.pid === 'number' ? e.pid : -1;
    const ts = typeof e.ts === 'number' ? e.ts : undefined;
    const name = typeof e.name === 'string' ? e.name : '';
    if (e.ph === 'i' && name === 'CYCLE_START') cycles++;
    if (pid >= 0 && e.ph !== 'M') tensors.add(pid);
    if (e.ph === 'B' && ts !== undefined) {
      const stack = open.get(pid) ?? [];
      stack.push({ name, ts });
      open.set(pid, stack);
      if (name.startsWith('NEGOTIATE')) {
        const list = rounds.get(pid);
        if (!list) rounds.set(pid, [{ ticks: new Map() }]);
        else if (list[list.length - 1]!.ticks.size > 0) list.push({ ticks: new Map() });
      }
    } else if (e.ph === 'E' && ts !== undefined) {
      const begin = open.get(pid)?.pop();
      if (begin) phase[begin.name] = (phase[begin.name] ?? 0) + (ts - begin.ts);
    } else if (e.ph === 'X' && ts !== undefined) {
      if (/^\d+$/.test(name)) currentRound(pid).ticks.set(Number(name), ts);
      else if (typeof e.dur === 'number') phase[name] = (phase[name] ?? 0) + e.dur;
    }
  }
  const perRank = new Map<number, { n: number; sum: number; max: number; last: number }>();
  for (const list of rounds.values()) {
    for (const r of list) {
      if (r.ticks.size === 0) continue;
      const first = Math.min(...r.ticks.values());
      const lastTs = Math.max(...r.ticks.values());
      for (const [rank, ts] of r.ticks) {
        const s = perRank.get(rank) ?? { n: 0, sum: 0, max: 0, last: 0 };
        s.n++;
        s.sum += ts - first;
        s.max = Math.max(s.max, ts - first);
        if (ts === lastTs && r.ticks.size > 1) s.last++;
        perRank.set(rank, s);
      }
    }
  }
  const ranks = [...perRank.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([rank, s]) => ({
      rank,
      negotiations: s.n,
      mean_delay_us: s.sum / s.n,
      max_delay_us: s.max,
      times_last: s.last,
    }));
  return { events: events.length, tensors: tensors.size, cycles, truncated, ranks, phase_us: phase };
}
