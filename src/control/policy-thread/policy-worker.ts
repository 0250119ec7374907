/**
 * The worker thread of a PolicyThread (policy-thread.ts): it makes the policy once, as the server
 * would (registry.ts `createSharedPolicy`), and decides every snapshot it is sent, in order, so
 * the policy's memos and state live here between rounds; it saves the memos when asked.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { memoJson, restoredBank } from '../../goodput/memo-bank.js';
import type { Policy } from '../../policy/policy.js';
import { createSharedPolicy } from '../../policy/registry.js';
import { fromWire, type WireJob, type WireSnapshot } from './snapshot-wire.js';
import type { PolicyThreadInit, ThreadReply, ThreadRequest } from './policy-thread.js';

const init = workerData as PolicyThreadInit;
const port = parentPort!;
let policy: Policy;
// The policy's memos, saved on request and seeded from those saved before (goodput/memo-bank.ts).
const bank = restoredBank(init.memo);
try {
  policy = await createSharedPolicy(init.name, { ...init.options, memo_bank: bank });
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
// Snapshots being received, by request id: their head and their jobs so far.
const receiving = new Map<number, { head: Omit<WireSnapshot, 'jobs'>; jobs: WireJob[] }>();
port.on('message', (request: ThreadRequest) => {
  if ('head' in request) {
    // Snapshots are sent one after another: one still unfinished when the next begins failed on
    // its way (a part that could not be copied) and is never decided.
    receiving.clear();
    receiving.set(request.id, { head: request.head, jobs: [] });
  } else if ('jobs' in request) receiving.get(request.id)?.jobs.push(...request.jobs);
  else if ('save_memo' in request)
    port.postMessage({ memo: { id: request.id, json: memoJson(bank) ?? null } } satisfies ThreadReply);
  else {
    const parts = receiving.get(request.id);
    receiving.delete(request.id);
    try {
      // One port delivers in order, so a head always comes first; without one, say so (a bug).
      if (!parts) throw new Error(`the policy thread got the end of snapshot ${request.id} without its head`);
      const decision = policy.decide(fromWire({ ...parts.head, jobs: parts.jobs }));
      port.postMessage({ decided: { id: request.id, decision } } satisfies ThreadReply);
    } catch (error) {
      port.postMessage(failure(request.id, error));
    }
  }
});

function failure(id: number, error: unknown): ThreadReply {
  const e = error as Error & { code?: unknown };
  return { failed: { id, message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) } };
}
