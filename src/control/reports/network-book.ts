/**
 * The cluster network model in the control plane (goodput/network-model.ts; docs/control-plane.md
 * "Profiles"), by the one rule of model/network.ts and model/job-fit.ts shared with the
 * simulator: a job with no profile of other jobs to start from, measured on one node only, gets
 * its cross-node terms from what the key profiles of its GPU type measured on several nodes.
 */
import type { BackendNode } from '../../backends/backend.js';
import type { NetworkParams } from '../../goodput/network-model.js';
import { NetworkModelCache } from '../../model/network.js';
import type { Store } from '../../store/store.js';
import type { JobRecord } from '../../store/types.js';
import { gpuTypeOf } from './profile-book.js';

/**
 * The network model per GPU type, fitted over the stored key profiles of that type only (jobs on
 * other GPUs crossed other networks) and refitted only when their multi-node shapes changed
 * (model/network.ts). Reads the stored profiles at each call (listKeyProfiles); store errors are
 * thrown to the caller.
 */
export class NetworkBook {
  private readonly cache = new NetworkModelCache();

  constructor(
    private readonly store: Store,
    private readonly nodes: () => readonly BackendNode[],
  ) {}

  /** The network model for the job's GPU type (profile-book.ts `gpuTypeOf`); undefined while no profile of it has multi-node points. */
  async paramsFor(job: Pick<JobRecord, 'allocation' | 'devices'>): Promise<NetworkParams | undefined> {
    const gpu_type = gpuTypeOf(job, this.nodes());
    const profiles = (await this.store.listKeyProfiles()).filter((p) => p.gpu_type === gpu_type);
    return this.cache.paramsFor(gpu_type, () => profiles);
  }
}
