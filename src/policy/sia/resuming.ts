/**
 * The goodput policy on a mixed cluster as the control plane runs it. GoodputHetero discounts a
 * change of a job's configuration against the configuration it chose for the job last round,
 * which it remembers by position in its list of configurations. The control plane starts a new
 * instance when that list changes (open nodes change), after a decision it overrode, and at
 * server start (policy/typed.ts OpenNodes); such an instance has chosen nothing yet and would
 * move every job once without the discount. Here a job the instance has not placed is discounted
 * against the configuration it holds now: the type and GPU count of its current allocation, read
 * from the snapshot, which names no position. Pure (but for the memory of its base).
 */
import { gpuTypeOf, type ClusterSnapshot } from '../../core/cluster.js';
import type { PolicyDecision } from '../policy.js';
import type { TypedJob } from '../typed.js';
import { GoodputHetero } from './goodput-hetero.js';
import { ZERO_GAIN, type SiaConfig } from './sia.js';

/** GoodputHetero whose change discount holds across restarts of the instance. */
export class ResumingGoodputHetero extends GoodputHetero {
  /** Jobs this instance placed last round: its base discounts their changes itself. */
  private placed = new Set<string>();
  /** This round: the (type, GPUs) held by each job the instance did not place. */
  private held = new Map<string, { type: string; gpus: number }>();
  /** This round: each job's goodput row before the discount (what its weight is computed from). */
  private undiscounted = new Map<string, readonly number[]>();
  private now_s = 0;

  override decide(s: ClusterSnapshot): PolicyDecision {
    this.now_s = s.now_s;
    this.held = new Map();
    this.undiscounted = new Map();
    for (const [id, a] of Object.entries(s.allocations)) {
      const node = a.length > 0 ? s.nodes[a[0]!] : undefined;
      if (node && !this.placed.has(id)) this.held.set(id, { type: gpuTypeOf(node), gpus: a.length });
    }
    const out = super.decide(s);
    this.placed = new Set(
      Object.entries(out.allocations)
        .filter(([, a]) => a.length > 0)
        .map(([id]) => id),
    );
    return out;
  }

  /** The base's row, with every configuration other than the one the job holds discounted as the base discounts a change. */
  protected override goodputRow(
    job: TypedJob,
    configs: readonly SiaConfig[],
    gpn: ReadonlyMap<string, number>,
  ): number[] {
    const row = super.goodputRow(job, configs, gpn);
    const held = this.held.get(job.id);
    if (!held) return row;
    this.undiscounted.set(job.id, row);
    const min = this.lastMinGoodput;
    // A configuration not allowed (ZERO_GAIN) stays not allowed: no discount computed for it.
    const out = row.slice();
    for (let c = 0; c < row.length; c++) {
      const g = row[c]!;
      if (g <= ZERO_GAIN || (configs[c]!.type === held.type && configs[c]!.gpus === held.gpus)) continue;
      out[c] = g * this.changeFactor(job, g * min, this.now_s, configs[c]!.type !== held.type);
    }
    return out;
  }

  protected override jobWeight(job: TypedJob, normalized: readonly number[], configs: readonly SiaConfig[]): number {
    return super.jobWeight(job, this.undiscounted.get(job.id) ?? normalized, configs);
  }
}
