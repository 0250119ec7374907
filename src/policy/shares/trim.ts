/**
 * Fitting one user's current allocations into the devices the shares layer leaves them on each
 * node: elastic jobs shrink first (down to their minimum, at least one replica), then whole
 * preemptible jobs stop (least progress at risk, then the most recently started, then by id).
 * Non-preemptible jobs are never touched (the layer never takes their devices). Pure.
 */
import type { Allocation, PolicyJob } from '../../core/cluster.js';

/**
 * `allocations` of `jobs` (one user's) trimmed so that no node holds more than `view[n]` of them;
 * jobs not in `allocations` hold nothing. Returns a new record; unchanged jobs keep their lists.
 */
export function fitToView(
  jobs: readonly PolicyJob[],
  allocations: Readonly<Record<string, Allocation>>,
  view: readonly number[],
): Record<string, Allocation> {
  const out: Record<string, number[]> = {};
  for (const j of jobs) if (allocations[j.id]?.length) out[j.id] = [...allocations[j.id]!];
  const used = new Array<number>(view.length).fill(0);
  for (const a of Object.values(out)) for (const n of a) used[n] = (used[n] ?? 0) + 1;
  const movable = jobs.filter((j) => j.preemptible && out[j.id] !== undefined);
  for (let n = 0; n < view.length; n++) {
    let over = (used[n] ?? 0) - view[n]!;
    if (over <= 0) continue;
    // Shrink: the largest elastic job on the node first, one replica at a time.
    for (;;) {
      if (over <= 0) break;
      const shrinkable = movable
        .filter((j) => out[j.id]?.includes(n) === true && out[j.id]!.length > Math.max(1, j.min_replicas))
        .sort((a, b) => out[b.id]!.length - out[a.id]!.length || (a.id < b.id ? -1 : 1));
      const j = shrinkable[0];
      if (!j) break;
      const a = out[j.id]!;
      a.splice(a.lastIndexOf(n), 1);
      used[n]!--;
      over--;
    }
    // Stop: whole jobs on the node, cheapest to stop first.
    const stoppable = movable
      .filter((j) => out[j.id]?.includes(n))
      .sort(
        (a, b) =>
          (a.progress_at_risk_s ?? 0) - (b.progress_at_risk_s ?? 0) ||
          (b.allocated_since_s ?? 0) - (a.allocated_since_s ?? 0) ||
          (a.id < b.id ? 1 : -1),
      );
    for (const j of stoppable) {
      if (over <= 0) break;
      for (const m of out[j.id]!) used[m]!--;
      over -= out[j.id]!.filter((m) => m === n).length;
      delete out[j.id];
    }
  }
  return out;
}
