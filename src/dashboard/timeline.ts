/**
 * Allocation timelines: which job held which device when. `TimelineBuilder` collects bands and
 * merges a band into the previous one of its row when the same job continues without a gap, so
 * a simulation's per-interval records become one band per stretch.
 */
import type { Store } from '../store/store.js';
import type { JobRecord, ReplicaSpan } from '../store/types.js';
import type { ClusterNode, Timeline } from './types.js';

export class TimelineBuilder {
  private readonly t: Timeline;
  private readonly labelIndex = new Map<string, number>();
  private readonly lastOfRow = new Map<number, number>();

  constructor(from_ms: number, to_ms: number, rows: string[]) {
    this.t = { from_ms, to_ms, rows, labels: [], ids: [], row: [], job: [], start_ms: [], end_ms: [] };
  }

  /** Adds `[start_ms, end_ms)` of job `key` on `row`; `id` '' hides the job (another user's). */
  add(row: number, key: string, label: string, id: string, start_ms: number, end_ms: number): void {
    if (end_ms <= start_ms) return;
    let j = this.labelIndex.get(key);
    if (j === undefined) {
      j = this.t.labels.length;
      this.labelIndex.set(key, j);
      this.t.labels.push(label);
      this.t.ids.push(id);
    }
    const last = this.lastOfRow.get(row);
    if (last !== undefined && this.t.job[last] === j && this.t.end_ms[last]! >= start_ms) {
      this.t.end_ms[last] = Math.max(this.t.end_ms[last]!, end_ms);
      return;
    }
    this.lastOfRow.set(row, this.t.row.length);
    this.t.row.push(row);
    this.t.job.push(j);
    this.t.start_ms.push(start_ms);
    this.t.end_ms.push(end_ms);
  }

  /** The timeline; `zoom` starts it at its first band (a window of hours with minutes of history would be empty). */
  build(zoom = false): Timeline {
    if (zoom && this.t.start_ms.length > 0) {
      let first = Infinity;
      for (const start of this.t.start_ms) first = Math.min(first, start);
      this.t.from_ms = Math.max(this.t.from_ms, first - (this.t.to_ms - first) * 0.02);
    }
    return this.t;
  }
}

/** Row label of each device, node by node (the cluster grid's order). */
export function deviceRows(nodes: readonly ClusterNode[]): {
  rows: string[];
  rowOf: (node: number, device: number) => number | undefined;
} {
  const rows: string[] = [];
  const index = new Map<string, number>();
  nodes.forEach((n, ni) => {
    for (const d of n.devices) {
      index.set(`${ni}:${d.index}`, rows.length);
      rows.push(nodes.length > 1 ? `${n.name}/${d.kind}${d.index}` : `${d.kind}${d.index}`);
    }
  });
  return { rows, rowOf: (node, device) => index.get(`${node}:${device}`) };
}

/**
 * Timeline of the control plane over `[from_ms, now_ms]` from the replicas the store recorded:
 * one band per replica process on its device. Jobs `visible` returns false for are shown
 * unnamed. A replica of an earlier attempt is drawn on node 0 when its node is no longer known
 * (the store keeps the node of the current placement only).
 */
export async function liveTimeline(
  store: Store,
  jobs: readonly JobRecord[],
  nodes: readonly ClusterNode[],
  visible: (job: JobRecord) => boolean,
  from_ms: number,
  now_ms: number,
): Promise<Timeline> {
  const { rows, rowOf } = deviceRows(nodes);
  const builder = new TimelineBuilder(from_ms, now_ms, rows);
  const drawn = jobs.filter(
    (job) => job.started_at_ms !== null && (job.finished_at_ms === null || job.finished_at_ms >= from_ms),
  );
  // One read for every drawn job instead of one per job (2,000 running at 16,384 GPUs).
  const replicasOf = new Map<string, ReplicaSpan[]>();
  for (const r of await store.listReplicasSince(
    drawn.map((job) => job.id),
    from_ms,
  )) {
    const list = replicasOf.get(r.job_id);
    if (list) list.push(r);
    else replicasOf.set(r.job_id, [r]);
  }
  // Jobs in their given order: a job's colour is its place among the timeline's jobs.
  for (const job of drawn) {
    const shown = visible(job);
    for (const r of replicasOf.get(job.id) ?? []) {
      if (r.device === null) continue;
      const node = r.attempt === job.launches - 1 ? (job.allocation[r.rank] ?? 0) : 0;
      const row = rowOf(node, r.device);
      if (row === undefined) continue;
      builder.add(
        row,
        shown ? job.id : '',
        shown ? job.name : '',
        shown ? job.id : '',
        Math.max(r.started_at_ms, from_ms),
        r.exited_at_ms ?? now_ms,
      );
    }
  }
  return builder.build(true);
}
