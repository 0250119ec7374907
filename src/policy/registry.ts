import type { PolicyFactory } from './policy.js';
import { fifoPolicy } from './fifo.js';
import { goodputPolicy } from './goodput/index.js';
import { optimusPolicy } from './optimus.js';
import { polluxPolicy } from './pollux/pollux-policy.js';
import { tiresiasPolicy } from './tiresias.js';

/** Every policy, by name. Add a factory here to make it available to `goodput sim` and `up`. */
const factories: readonly PolicyFactory[] = [fifoPolicy, tiresiasPolicy, optimusPolicy, polluxPolicy, goodputPolicy];

/** Names of all registered policies, in registration order. */
export function policyNames(): string[] {
  return factories.map((f) => f.name);
}

/** The factory registered under `name`, or undefined. */
export function findPolicy(name: string): PolicyFactory | undefined {
  return factories.find((f) => f.name === name);
}
