import type { PolicyFactory } from './policy.js';

/** Every policy, by name. Add a factory here to make it available to `goodput sim` and `up`. */
const factories: readonly PolicyFactory[] = [];

/** Names of all registered policies, in registration order. */
export function policyNames(): string[] {
  return factories.map((f) => f.name);
}

/** The factory registered under `name`, or undefined. */
export function findPolicy(name: string): PolicyFactory | undefined {
  return factories.find((f) => f.name === name);
}
