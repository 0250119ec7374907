/**
 * The server's policy: the registered one the start names, with its knobs, deciding in the
 * server's thread or in a worker thread of its own (control/policy-thread) on a large cluster.
 */
import { GoodputError } from '../core/errors.js';
import { memoJson, restoredBank } from '../goodput/memo-bank.js';
import type { Policy, PolicyOptions } from '../policy/policy.js';
import { parsePolicyParams } from '../policy/policy-params.js';
import { createSharedPolicy, findPolicy, policyNames } from '../policy/registry.js';
import { PolicyThread } from '../control/policy-thread/policy-thread.js';

/** Where the policy decides (`goodput up --policy-thread`). */
export type PolicyThreadMode = 'on' | 'off' | 'auto';

/**
 * `auto` decides in a worker thread from this many devices. At 16,384 GPUs the thread took the
 * report p99 from 71-88 ms to 57-58 ms (bench:scale, issue #49); below about a thousand GPUs a
 * decide takes a few ms, less than copying the snapshot to a thread (not measured in between).
 */
export const POLICY_THREAD_FROM_DEVICES = 1024;

/** A policy checked at start: the registered name and its validated knobs. */
export interface PolicyChoice {
  name: string;
  options: Omit<PolicyOptions, 'solver' | 'memo_bank'>;
}

/**
 * The registered policy called `name` with its knobs set by `param_assignments` (NAME=VALUE),
 * checked before anything starts: an unknown name is a usage error listing the valid ones, a bad
 * knob an E_BAD_POLICY_PARAM error.
 */
export function choosePolicy(name: string, param_assignments: readonly string[] = []): PolicyChoice {
  const factory = findPolicy(name);
  if (!factory)
    throw new GoodputError('E_USAGE', `unknown policy '${name}'; registered: ${policyNames().join(', ')}`, 2);
  return { name, options: { seed: 0, params: parsePolicyParams(factory, param_assignments) } };
}

/** The server's policy and how to save its memos (JSON of goodput/memo-bank.ts MemoSnapshot; undefined: none). */
export interface ServerPolicy {
  policy: Policy | PolicyThread;
  saveMemo(): Promise<string | undefined>;
}

/**
 * The chosen policy under the shares layer (users share the cluster first: policy/shares, a
 * pass-through for one user), in a worker thread when `mode` says so (`auto`: from
 * POLICY_THREAD_FROM_DEVICES devices), its memos starting from `memo` (saved before; see
 * server/policy-memo.ts).
 */
export async function makePolicy(
  choice: PolicyChoice,
  devices: number,
  mode: PolicyThreadMode = 'auto',
  memo?: string,
): Promise<ServerPolicy> {
  const threaded = mode === 'on' || (mode === 'auto' && devices >= POLICY_THREAD_FROM_DEVICES);
  if (threaded) {
    const thread = await PolicyThread.start(memo === undefined ? choice : { ...choice, memo });
    return { policy: thread, saveMemo: () => thread.saveMemo() };
  }
  const bank = restoredBank(memo);
  const policy = await createSharedPolicy(choice.name, { ...choice.options, memo_bank: bank });
  return { policy, saveMemo: async () => memoJson(bank) };
}
