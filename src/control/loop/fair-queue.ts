/**
 * Fair order of waiting jobs between users, applied when the control plane presents its jobs to
 * the policy (snapshot.ts `buildSnapshot`). Every policy ranks waiting jobs by submission time
 * somewhere (FIFO first of all; Tiresias and Pollux after attained service), so one user's flood
 * of submits would take every slot that frees before another user's job submitted a second
 * later. Here the waiting jobs are interleaved by owner (the owner with the fewest jobs holding
 * devices or already ahead in the order first, then the earliest submit), and each is presented
 * with the submission time of its place: the k-th job of the fair order gets the k-th earliest
 * submission time of the waiting jobs. The times are a permutation of the real ones (ages and
 * their sum unchanged); jobs of one owner keep their own order; with one owner nothing changes.
 * Pure.
 */
import { PLACED_STATES } from '../../store/lifecycle.js';
import type { JobRecord } from '../../store/types.js';

/** A job is waiting when it is queued or preempted: not placed, not ended. */
const waiting = (job: JobRecord) => job.state === 'queued' || job.state === 'preempted';

/**
 * `jobs` (submission order) as the policy should see them: the jobs that do not wait unchanged
 * in their places, the waiting ones in the fair order in the waiting jobs' places, each with the
 * submission time of its place in `submitted_at_ms`. Returns `jobs` itself when the waiting jobs
 * have one owner (or none).
 */
export function fairQueue(jobs: readonly JobRecord[]): readonly JobRecord[] {
  const queues = new Map<string, JobRecord[]>();
  for (const job of jobs) if (waiting(job)) (queues.get(job.user) ?? queues.set(job.user, []).get(job.user)!).push(job);
  if (queues.size <= 1) return jobs;
  const ahead = new Map<string, number>();
  for (const job of jobs) if (PLACED_STATES.includes(job.state)) ahead.set(job.user, (ahead.get(job.user) ?? 0) + 1);
  for (const queue of queues.values()) queue.sort((a, b) => a.submitted_at_ms - b.submitted_at_ms);
  const times = jobs
    .filter(waiting)
    .map((j) => j.submitted_at_ms)
    .sort((a, b) => a - b);
  const next = new Map<string, number>([...queues.keys()].map((u) => [u, 0]));
  const order: JobRecord[] = [];
  while (order.length < times.length) {
    let pick: string | undefined;
    for (const [user, queue] of queues) {
      const head = queue[next.get(user)!];
      if (head === undefined) continue;
      if (pick === undefined) {
        pick = user;
        continue;
      }
      const load = (ahead.get(user) ?? 0) - (ahead.get(pick) ?? 0);
      if (load < 0 || (load === 0 && head.submitted_at_ms < queues.get(pick)![next.get(pick)!]!.submitted_at_ms))
        pick = user;
    }
    const job = queues.get(pick!)![next.get(pick!)!]!;
    next.set(pick!, next.get(pick!)! + 1);
    ahead.set(pick!, (ahead.get(pick!) ?? 0) + 1);
    order.push({ ...job, submitted_at_ms: times[order.length]! });
  }
  let k = 0;
  return jobs.map((job) => (waiting(job) ? order[k++]! : job));
}
