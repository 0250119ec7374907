/**
 * A drain stops new work, never work that runs (issue 47): while the backend says the cluster
 * accepts no new jobs (Backend.launchRefusal: a drained, down or inactive Slurm partition), a
 * round does not stop a running job for a rescale or a preemption, since its relaunch would only
 * wait for the partition. The job keeps its devices and runs as it is, with one event saying why;
 * the decision is applied as usual by the first round after the cluster accepts jobs again. Jobs
 * that end or fail on their own are handled as always (the supervisor's stops are not filtered).
 */
import type { JobRecord } from '../../store/types.js';
import type { ControllerContext } from '../controller-context.js';
import { sameAllocation } from './device-binding.js';
import { deviceUnit } from './insight.js';

/** noteOnce key of the event of a job kept running; forgotten once the cluster accepts jobs. */
const KEPT = 'kept-running';

/**
 * The policy's `allocations` with every running job whose allocation would change kept on its
 * current one while `launchRefusal()` says the cluster accepts no new jobs (unchanged otherwise).
 * `jobs` and `allocations` name the policy's nodes; `capacity[i]` is how many devices node i has
 * for Goodput. The devices a kept job holds are given to no other job: a job whose new placement
 * no longer fits keeps its current one if that fits, else gets none (it could not launch now
 * anyway). Records one `waiting` event per kept job and drain.
 */
export async function keepRunning(
  ctx: ControllerContext,
  jobs: readonly JobRecord[],
  allocations: Readonly<Record<string, readonly number[]>>,
  capacity: readonly number[],
): Promise<Record<string, readonly number[]>> {
  const { backend } = ctx.config;
  const refusal = backend.launchRefusal?.();
  const running = jobs.filter((j) => j.state === 'running');
  if (refusal === undefined) {
    for (const j of running) ctx.forget(j.id, KEPT);
    return { ...allocations };
  }
  const kept = running.filter((j) => !sameAllocation(allocations[j.id] ?? [], j.allocation));
  if (kept.length === 0) return { ...allocations };
  const out: Record<string, readonly number[]> = { ...allocations };
  for (const j of kept) out[j.id] = j.allocation;
  const used = capacity.map(() => 0);
  const fits = (a: readonly number[]): boolean => {
    const u = [...used];
    return a.every((n) => n < 0 || n >= u.length || ++u[n]! <= capacity[n]!);
  };
  const take = (a: readonly number[]): void => {
    for (const n of a) if (n >= 0 && n < used.length) used[n]! += 1;
  };
  // Running jobs first (kept or unchanged), then the rest in the policy's order of the jobs.
  for (const j of running) take(out[j.id] ?? []);
  for (const j of jobs) {
    if (j.state === 'running') continue;
    const wanted = out[j.id] ?? [];
    const placed = fits(wanted) ? wanted : fits(j.allocation) ? j.allocation : [];
    if (placed !== wanted) out[j.id] = placed;
    take(placed);
  }
  const unit = deviceUnit(backend.nodes().flatMap((n) => n.devices));
  for (const j of kept) {
    const n = j.allocation.length;
    const to = allocations[j.id]?.length ?? 0;
    const what = to === 0 ? 'the preemption' : `the rescale to ${to}`;
    const reason = `kept on ${n} ${unit}${n === 1 ? '' : 's'}: ${refusal}; ${what} waits until it accepts jobs`;
    await ctx.noteOnce(j.id, KEPT, 'waiting', reason).catch(() => undefined);
  }
  return out;
}
