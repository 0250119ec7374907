/**
 * The cluster network model in the control plane (goodput/network-model.ts; docs/control-plane.md
 * "Profiles"), by the simulator's rule (sim/profile-store.ts `SimProfileStore.fitJob`): a job
 * with no profile of other jobs to start from, measured on one node only, gets its cross-node
 * terms from what the key profiles of its GPU type measured on several nodes.
 */
import type { BackendNode } from '../backends/backend.js';
import { shapeKey } from '../goodput/key-profile.js';
import { fitNetworkModel, type NetworkParams } from '../goodput/network-model.js';
import type { Store } from '../store/store.js';
import type { JobRecord, StoredKeyProfile } from '../store/types.js';
import { gpuTypeOf } from './profile-book.js';

/**
 * The multi-node placement shapes of `profiles`, per key, as one string: the network model's
 * input changed when it changed. A set, not SimProfileStore's count, because a live profile can
 * be removed (`goodput profiles rm`) and remeasured at other shapes with the same count.
 * Pure; independent of the order of the profiles and of their points.
 */
export function multiNodeSignature(profiles: readonly Pick<StoredKeyProfile, 'key' | 'points'>[]): string {
  const shapes = new Set<string>();
  for (const profile of profiles) {
    for (const p of profile.points) if (p.num_nodes > 1) shapes.add(`${profile.key}\n${shapeKey(p)}`);
  }
  return [...shapes].sort().join('\t');
}

/**
 * The network model per GPU type, fitted over the stored key profiles of that type only (jobs on
 * other GPUs crossed other networks) and refitted only when their multi-node shapes changed, as
 * the simulator does: a refit per report would cost a fit of every profile's one-node points.
 * Reads the stored profiles at each call (listKeyProfiles); store errors are thrown to the caller.
 */
export class NetworkBook {
  private readonly fitted = new Map<string, { signature: string; params: NetworkParams | undefined }>();

  constructor(private readonly store: Store, private readonly nodes: () => readonly BackendNode[]) {}

  /** The network model for the job's GPU type (profile-book.ts `gpuTypeOf`); undefined while no profile of it has multi-node points. */
  async paramsFor(job: Pick<JobRecord, 'allocation' | 'devices'>): Promise<NetworkParams | undefined> {
    const gpu_type = gpuTypeOf(job, this.nodes());
    const profiles = (await this.store.listKeyProfiles()).filter((p) => p.gpu_type === gpu_type);
    const signature = multiNodeSignature(profiles);
    const cached = this.fitted.get(gpu_type);
    if (cached?.signature === signature) return cached.params;
    const params = signature === '' ? undefined : fitNetworkModel(profiles);
    this.fitted.set(gpu_type, { signature, params });
    return params;
  }
}
