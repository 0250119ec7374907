/**
 * The cluster network model over key profiles (goodput/network-model.ts), refitted only when the
 * multi-node placement shapes the profiles measured change: a refit per report would cost a fit
 * of every profile's one-node points. Pure (the cache holds no I/O).
 */
import { shapeKey, type KeyProfile } from '../goodput/key-profile.js';
import { fitNetworkModel, type NetworkParams } from '../goodput/network-model.js';
import type { PerfFitter } from './job-fit.js';

/**
 * The multi-node placement shapes of `profiles`, per key, as one string: the network model's
 * input changed when it changed. A set, not a count, because a profile can be removed and
 * remeasured at other shapes with the same count. Independent of the order of the profiles and
 * of their points.
 */
export function multiNodeSignature(profiles: readonly Pick<KeyProfile, 'key' | 'points'>[]): string {
  const shapes = new Set<string>();
  for (const profile of profiles) {
    for (const p of profile.points) if (p.num_nodes > 1) shapes.add(`${profile.key}\n${shapeKey(p)}`);
  }
  return [...shapes].sort().join('\t');
}

/** The network model per group of profiles (a GPU type), refitted when its signature changes. */
export class NetworkModelCache {
  private readonly fitted = new Map<string, { signature: string; params: NetworkParams | undefined }>();

  constructor(private readonly fit?: PerfFitter) {}

  /**
   * The network model of `group` fitted over `profiles`; `signature` (default multiNodeSignature)
   * names their multi-node shapes, so that an unchanged signature reuses the last fit. Undefined
   * while no profile has a multi-node point.
   */
  paramsFor(group: string, profiles: () => readonly KeyProfile[], signature?: string): NetworkParams | undefined {
    const list = signature === undefined ? profiles() : undefined;
    const sig = signature ?? multiNodeSignature(list!);
    const cached = this.fitted.get(group);
    if (cached?.signature === sig) return cached.params;
    const all = list ?? profiles();
    const params = fitNetworkModel(all, {}, this.fit);
    this.fitted.set(group, { signature: sig, params });
    return params;
  }
}
