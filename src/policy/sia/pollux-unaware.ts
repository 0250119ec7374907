/**
 * Pollux run type-unaware on a mixed cluster, as the Sia artifact runs it: the nodes are cut
 * into virtual nodes of the smallest per-node GPU count, Pollux allocates over them with one
 * model per job (its measurements on every type pooled), and a job's GPUs off the type holding
 * most of them are dropped (they stay idle). Pure.
 */
import type { Allocation, ClusterSnapshot, NodeInfo, PolicyJob } from '../../core/cluster.js';
import { gpuTypeOf } from '../../core/cluster.js';
import type { Policy, PolicyDecision, Rejection } from '../policy.js';
import { createPolluxPolicy } from '../pollux/pollux-policy.js';
import { NO_CONFIGURATION, typedJobs, typeGroups } from '../typed.js';

/** Type-unaware Pollux over typed nodes. */
export class PolluxUnaware implements Policy {
  readonly name = 'pollux';
  readonly pooled_models = true;
  private readonly inner: Policy;
  private vnodes: NodeInfo[] = [];
  private vnodeOf: number[][] = [];
  private realOf: number[] = [];
  private prev: Record<string, Allocation> = {};

  constructor(seed: number) {
    this.inner = createPolluxPolicy({ seed });
  }

  decide(s: ClusterSnapshot): PolicyDecision {
    if (this.vnodes.length === 0) this.split(s.nodes);
    const firstType = typeGroups(s.nodes)[0]!.type;
    // Its model (pooled over types where the driver pools them) with the first type's limits.
    const jobs: PolicyJob[] = typedJobs(s, this.name).map((j) => {
      const model = j.per_type.model(firstType);
      const profiled = Math.max(...Object.values(j.per_type.max_profiled));
      return {
        id: j.id,
        submitted_at_s: j.submitted_at_s,
        attained_service_gpu_s: j.attained_service_gpu_s,
        min_replicas: j.min_replicas,
        max_replicas: j.max_replicas,
        max_profiled_replicas: profiled,
        restarts: j.restarts,
        preemptible: j.preemptible,
        priority: j.priority,
        limits: j.per_type.limits(firstType),
        ...(j.fixed_batch_size !== undefined ? { fixed_batch_size: j.fixed_batch_size } : {}),
        ...(model ? { model } : {}),
      };
    });
    const allocations: Record<string, Allocation> = {};
    for (const j of s.jobs)
      if (this.prev[j.id]?.length && s.allocations[j.id]?.length) allocations[j.id] = this.prev[j.id]!;
    const decision = this.inner.decide({ now_s: s.now_s, nodes: this.vnodes, jobs, allocations });
    const out: Record<string, Allocation> = {};
    this.prev = {};
    for (const [id, valloc] of Object.entries(decision.allocations)) {
      if (valloc.length === 0) continue;
      const count = new Map<string, number>();
      for (const v of valloc) {
        const t = gpuTypeOf(this.vnodes[v]!);
        count.set(t, (count.get(t) ?? 0) + 1);
      }
      let primary = '';
      let most = -1;
      for (const [t, c] of count) {
        if (c > most) {
          primary = t;
          most = c;
        }
      }
      const kept = valloc.filter((v) => gpuTypeOf(this.vnodes[v]!) === primary);
      this.prev[id] = kept;
      out[id] = kept.map((v) => this.realOf[v]!);
    }
    const rejections: Record<string, Rejection> = {};
    for (const j of s.jobs) if (!out[j.id]) rejections[j.id] = decision.rejections?.[j.id] ?? NO_CONFIGURATION;
    return { allocations: out, rejections };
  }

  private split(nodes: readonly NodeInfo[]): void {
    const size = Math.min(...nodes.map((n) => n.gpus));
    for (const n of nodes) {
      const list: number[] = [];
      for (let k = 0; k < Math.floor(n.gpus / size); k++) {
        list.push(this.vnodes.length);
        this.realOf.push(n.index);
        this.vnodes.push({
          index: this.vnodes.length,
          name: `${n.name}/${k}`,
          gpus: size,
          preemptible: false,
          gpu_type: gpuTypeOf(n),
        });
      }
      this.vnodeOf.push(list);
    }
  }
}
