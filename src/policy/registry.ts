import { GoodputError } from '../core/errors.js';
import { byShape } from './by-shape.js';
import { fifoPolicy } from './fifo.js';
import { goodputPolicy } from './goodput/index.js';
import { optimusPolicy } from './optimus.js';
import type { Policy, PolicyFactory, PolicyOptions } from './policy.js';
import { createPolluxPolicy, polluxPolicy } from './pollux/pollux-policy.js';
import { siaPolicy } from './sia/index.js';
import { PolluxUnaware } from './sia/pollux-unaware.js';
import { loadHighsSolver } from './solver.js';
import { withShares, type SharesKnobs } from './shares/layer.js';
import { tiresiasPolicy } from './tiresias.js';
import { oneTypePerJob, OpenNodes } from './typed.js';

/** A type-unaware factory whose policies keep each job on one GPU type (typed.ts `oneTypePerJob`). */
function typeUnaware(f: PolicyFactory): PolicyFactory {
  return { ...f, create: (options) => oneTypePerJob(f.create(options)) };
}

/**
 * Pollux on any cluster: on several GPU types, type-unaware over virtual nodes as the Sia
 * artifact runs it (sia/pollux-unaware.ts).
 */
const polluxAnyShape: PolicyFactory = {
  ...polluxPolicy,
  create: (options) => {
    const typed = () => new OpenNodes(() => new PolluxUnaware(options.seed));
    return byShape(createPolluxPolicy(options), typed, { pooled_models: true });
  },
};

/**
 * Every policy, by name: each decides on any snapshot, one GPU type or several. Add a factory
 * here to make it available to `goodput sim` and `up`.
 */
const factories: readonly PolicyFactory[] = [
  typeUnaware(fifoPolicy),
  typeUnaware(tiresiasPolicy),
  typeUnaware(optimusPolicy),
  polluxAnyShape,
  goodputPolicy,
  siaPolicy,
];

/** Names of all registered policies, in registration order. */
export function policyNames(): string[] {
  return factories.map((f) => f.name);
}

/** The factory registered under `name`, or undefined. */
export function findPolicy(name: string): PolicyFactory | undefined {
  return factories.find((f) => f.name === name);
}

/**
 * A policy of the factory `name`, with the MILP solver loaded where it uses one (the one way the
 * drivers make a policy that may meet several GPU types). Unknown name: E_UNKNOWN_POLICY.
 */
export async function createPolicy(name: string, options: PolicyOptions): Promise<Policy> {
  const factory = findPolicy(name);
  if (!factory) {
    throw new GoodputError(
      'E_UNKNOWN_POLICY',
      `unknown policy '${name}'; valid policies: ${policyNames().join(', ')}.`,
      2,
    );
  }
  const solve = factory.uses_solver === true && !options.solver;
  return factory.create(solve ? { ...options, solver: await loadHighsSolver() } : options);
}

/**
 * The policy `name` under the shares layer (policy/shares/layer.ts): one instance per owner,
 * shared between people first; an exact pass-through while the jobs have at most one owner.
 * Errors as createPolicy.
 */
export async function createSharedPolicy(
  name: string,
  options: PolicyOptions,
  knobs: SharesKnobs = {},
): Promise<Policy> {
  const first = await createPolicy(name, options);
  const factory = findPolicy(name)!;
  const solve = factory.uses_solver === true && !options.solver;
  const resolved = solve ? { ...options, solver: await loadHighsSolver() } : options;
  let made = false;
  return withShares(() => {
    if (made) return factory.create(resolved);
    made = true;
    return first;
  }, knobs);
}
