/**
 * One policy over every cluster shape: a policy whose algorithm on one GPU type predates types
 * (goodput's sizing, Pollux's search) decides with it there, and with its typed counterpart on
 * several types, made on the first such snapshot. The drivers see one policy and never ask the
 * cluster's shape. Pure but for the memory of the policies it holds.
 */
import type { ClusterSnapshot } from '../core/cluster.js';
import { GoodputError } from '../core/errors.js';
import type { Policy, PolicyDecision } from './policy.js';
import type { MilpSolver } from './sia/assignment.js';
import { severalTypes } from './typed.js';

/** What the typed counterpart declares before it exists (the drivers read flags before the first round). */
export type TypedFlags = Pick<Policy, 'pooled_models' | 'corrects_profiles' | 'transfers_models'>;

class ByShape implements Policy {
  readonly name: string;
  readonly uses_profiles?: boolean;
  readonly uses_network_model?: boolean;
  private typed: Policy | undefined;

  constructor(
    private readonly oneType: Policy,
    private readonly makeTyped: () => Policy,
    flags: TypedFlags,
  ) {
    this.name = oneType.name;
    Object.assign(this, flags);
    if (oneType.uses_profiles !== undefined) this.uses_profiles = oneType.uses_profiles;
    if (oneType.uses_network_model !== undefined) this.uses_network_model = oneType.uses_network_model;
  }

  decide(s: ClusterSnapshot): PolicyDecision {
    if (!severalTypes(s.nodes)) return this.oneType.decide(s);
    this.typed ??= this.makeTyped();
    return this.typed.decide(s);
  }
}

/** `oneType` on a cluster of one GPU type, `makeTyped()`'s policy on several. */
export function byShape(oneType: Policy, makeTyped: () => Policy, flags: TypedFlags = {}): Policy {
  return new ByShape(oneType, makeTyped, flags);
}

/** The solver of `policy`, or E_POLICY saying how to get one. */
export function requireSolver(solver: MilpSolver | undefined, policy: string): MilpSolver {
  if (solver) return solver;
  const how = 'create it with createPolicy (policy/registry.ts)';
  throw new GoodputError('E_POLICY', `policy ${policy} needs the MILP solver to place jobs by GPU type: ${how}`);
}
