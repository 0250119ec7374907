/**
 * The worker thread of a PolicyThread (policy-thread.ts): it makes the policy once, as the server
 * would (registry.ts `createSharedPolicy`), and decides every snapshot it is sent, in order, so
 * the policy's memos and state live here between rounds.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Policy } from '../../policy/policy.js';
import { createSharedPolicy } from '../../policy/registry.js';
import { fromWire } from './snapshot-wire.js';
import type { PolicyThreadInit, ThreadReply, ThreadRequest } from './policy-thread.js';

const init = workerData as PolicyThreadInit;
const port = parentPort!;
let policy: Policy;
try {
  policy = await createSharedPolicy(init.name, init.options);
  port.postMessage({
    ready: {
      name: policy.name,
      uses_profiles: policy.uses_profiles === true,
      uses_network_model: policy.uses_network_model === true,
    },
  } satisfies ThreadReply);
} catch (error) {
  port.postMessage(failure(-1, error));
  process.exit(1);
}
port.on('message', (request: ThreadRequest) => {
  try {
    const decision = policy.decide(fromWire(request.snapshot));
    port.postMessage({ decided: { id: request.id, decision } } satisfies ThreadReply);
  } catch (error) {
    port.postMessage(failure(request.id, error));
  }
});

function failure(id: number, error: unknown): ThreadReply {
  const e = error as Error & { code?: unknown };
  return { failed: { id, message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
}
