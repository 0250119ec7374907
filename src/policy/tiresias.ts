import type { Allocation, ClusterSnapshot, PolicyJob } from '../core/cluster.js';
import type { Policy, PolicyDecision, PolicyFactory, PolicyOptions, Rejection } from './policy.js';
import { freeGpus, pinnedAllocations, allocateGreedy, totalGpus, validAllocation } from './greedy-allocation.js';

/** Attained GPU-seconds after which a job drops from the first to the second queue (16 GPU-h). */
export const TIRESIAS_QUEUE_THRESHOLD_GPU_S = 16 * 3600;

type Status = 'RUNNING' | 'PENDING';

/**
 * Gang size of a job under Tiresias: its max_replicas (the CSV GPU count in the simulator),
 * capped at the cluster size, but never below min_replicas or 1.
 */
export function gangSize(job: PolicyJob, clusterGpus: number): number {
  return Math.max(1, job.min_replicas, Math.min(job.max_replicas, clusterGpus));
}

/**
 * Tiresias (pollux-spec §5.2): discretized two-queue least-attained-service with all-or-nothing
 * gangs. Jobs enter queue 0; a job that has run for 16 GPU-hours (wall time since it started
 * running, restart delays included, times its gang size) moves to the tail of queue 1 for good.
 * Each round, queue 0 then queue 1 are walked in entry order and every gang that still fits the
 * free GPU count runs (smaller later jobs backfill); the others are preempted. Running jobs keep
 * their GPUs; newly started ones go greedily onto the nodes with the most free GPUs.
 * State lives in the instance: one instance per cluster. Non-preemptible jobs that hold GPUs are
 * pinned and counted first.
 */
export class TiresiasPolicy implements Policy {
  readonly name = 'tiresias';
  private q0: string[] = [];
  private q1: string[] = [];
  private readonly status = new Map<string, Status>();
  private readonly lastCheck_s = new Map<string, number>();
  private readonly executed_s = new Map<string, number>();

  decide(snapshot: ClusterSnapshot): PolicyDecision {
    const t = Math.trunc(snapshot.now_s);
    const jobs = new Map(snapshot.jobs.map((j) => [j.id, j]));
    const clusterGpus = totalGpus(snapshot);
    this.q0 = this.q0.filter((id) => jobs.has(id));
    this.q1 = this.q1.filter((id) => jobs.has(id));
    for (const id of [...this.status.keys()]) if (!jobs.has(id)) this.status.delete(id);
    for (const job of snapshot.jobs) {
      if (!this.status.has(job.id)) {
        this.status.set(job.id, 'PENDING');
        this.q0.push(job.id);
      }
    }
    for (const job of snapshot.jobs) {
      const last = this.lastCheck_s.get(job.id) ?? 0;
      this.lastCheck_s.set(job.id, t);
      if (this.status.get(job.id) !== 'RUNNING') continue;
      const executed = (this.executed_s.get(job.id) ?? 0) + (t - last);
      this.executed_s.set(job.id, executed);
      const at = this.q0.indexOf(job.id);
      if (at >= 0 && executed * gangSize(job, clusterGpus) >= TIRESIAS_QUEUE_THRESHOLD_GPU_S) {
        this.q0.splice(at, 1);
        this.q1.push(job.id);
      }
    }

    const pinned = pinnedAllocations(snapshot);
    const allocations: Record<string, Allocation> = {};
    const rejections: Record<string, Rejection> = {};
    let count = clusterGpus;
    for (const [id, alloc] of pinned) {
      this.status.set(id, 'RUNNING');
      allocations[id] = alloc;
      count -= alloc.length;
    }
    const queues = [this.q0, this.q1];
    const kept: Allocation[] = [...pinned.values()];
    queues.forEach((queue, q) =>
      queue.forEach((id, position) => {
        if (pinned.has(id)) return;
        const job = jobs.get(id)!;
        const gang = gangSize(job, clusterGpus);
        if (gang <= count) {
          this.status.set(id, 'RUNNING');
          count -= gang;
          const current = snapshot.allocations[id];
          if (validAllocation(snapshot, current) && current.length === gang) {
            allocations[id] = current;
            kept.push(current);
          }
        } else {
          this.status.set(id, 'PENDING');
          rejections[id] =
            gang > clusterGpus
              ? { code: 'TOO_LARGE', message: `needs ${gang} GPUs at once; the cluster has ${clusterGpus}` }
              : {
                  code: 'QUEUED',
                  message: `waiting for ${gang} free GPUs (Tiresias queue ${q}, position ${position + 1})`,
                };
        }
      }),
    );
    const free = freeGpus(snapshot, kept);
    for (const queue of queues) {
      for (const id of queue) {
        if (this.status.get(id) !== 'RUNNING' || allocations[id]) continue;
        const placed = allocateGreedy(free, gangSize(jobs.get(id)!, clusterGpus));
        if (placed) allocations[id] = placed;
        else {
          this.status.set(id, 'PENDING');
          rejections[id] = {
            code: 'NO_ROOM',
            message: 'its gang fits the free GPU count but not the nodes (some nodes are over-committed)',
          };
        }
      }
    }
    return { allocations, rejections };
  }
}

/** Registry entry of Tiresias (deterministic: the seed is ignored). */
export const tiresiasPolicy: PolicyFactory = {
  name: 'tiresias',
  job_mode: 'gang',
  description:
    'Tiresias: two-queue least-attained-service, all-or-nothing gangs of the requested size (16 GPU-h threshold)',
  create: (_options: PolicyOptions) => new TiresiasPolicy(),
};
