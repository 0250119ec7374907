/**
 * A registered policy that decides in a worker thread of its own, so that a round of a large
 * cluster does not hold the server's event loop while reports and API calls wait (issue #49): at
 * 16,384 GPUs a decide takes 100-200 ms in the first rounds after a start and 20-25 ms later.
 * The policy lives in the worker between rounds (its memos and state) and decides the snapshots
 * it is sent, in order. Sending one is a structured copy of plain data (snapshot-wire.ts), made
 * synchronously here: 15-25 ms at that size (3,000 active jobs, 5 MB as JSON), so the thread pays
 * where decides are long, not in a round of a small cluster.
 * A worker that dies (a bug, out of memory) fails the decides under way; the next decide starts
 * a fresh one, as a server restart would.
 */
import { Worker } from 'node:worker_threads';
import type { ClusterSnapshot } from '../../core/cluster.js';
import { GoodputError, type ErrorCode } from '../../core/errors.js';
import type { PolicyDecision, PolicyOptions } from '../../policy/policy.js';
import { toWire, type WireSnapshot } from './snapshot-wire.js';

/** What the worker makes its policy from (workerData): registry.ts `createSharedPolicy`'s arguments. */
export interface PolicyThreadInit {
  name: string;
  /** Without a solver: the worker loads its own where the policy uses one. */
  options: Omit<PolicyOptions, 'solver'>;
}

/** A snapshot to decide; `id` pairs it with its reply. */
export interface ThreadRequest {
  id: number;
  snapshot: WireSnapshot;
}

/** The worker's messages: its policy's facts once made, then one decision or failure per request. */
export type ThreadReply =
  | { ready: PolicyFacts }
  | { decided: { id: number; decision: PolicyDecision } }
  | { failed: { id: number; message: string; code?: string } };

interface Pending {
  resolve(decision: PolicyDecision): void;
  reject(error: Error): void;
}

interface Running {
  worker: Worker;
  ready: Promise<void>;
}

/** A policy's facts, as the worker's instance has them. */
export interface PolicyFacts {
  name: string;
  uses_profiles: boolean;
  uses_network_model: boolean;
}

/**
 * The policy `init.name` deciding in a worker thread: the facts of Policy (name, what it reads)
 * and an asynchronous decide. Invariant: decisions come back in the order of their snapshots.
 */
export class PolicyThread {
  private running: Running | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;
  private facts: PolicyFacts;

  private constructor(private readonly init: PolicyThreadInit) {
    this.facts = { name: init.name, uses_profiles: false, uses_network_model: false };
  }

  /** Starts the worker and makes its policy; rejects as the policy's creation would (unknown name, bad knob). */
  static async start(init: PolicyThreadInit): Promise<PolicyThread> {
    const thread = new PolicyThread(init);
    await thread.launch();
    return thread;
  }

  get name(): string {
    return this.facts.name;
  }

  get uses_profiles(): boolean {
    return this.facts.uses_profiles;
  }

  get uses_network_model(): boolean {
    return this.facts.uses_network_model;
  }

  /** The policy's decision on `snapshot`, decided in the worker. */
  async decide(snapshot: ClusterSnapshot): Promise<PolicyDecision> {
    if (this.closed) throw new GoodputError('E_INTERNAL', 'the policy thread is closed');
    if (!this.running) await this.launch();
    await this.running!.ready;
    const request: ThreadRequest = { id: this.nextId++, snapshot: toWire(snapshot) };
    const decided = new Promise<PolicyDecision>((resolve, reject) => this.pending.set(request.id, { resolve, reject }));
    try {
      this.running!.worker.postMessage(request);
    } catch (error) {
      this.settle(request.id); // nothing to answer it: a snapshot that cannot be copied (a bug)
      throw error;
    }
    return decided;
  }

  /** Ends the worker; decides under way fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.running?.worker;
    this.running = undefined;
    await worker?.terminate();
  }

  private launch(): Promise<void> {
    const worker = new Worker(new URL('./policy-worker.js', import.meta.url), { workerData: this.init });
    // The server's handles keep the process alive; a worker left running must not.
    worker.unref();
    const ready = new Promise<void>((resolve, reject) => {
      worker.once('message', (m: ThreadReply) => {
        if ('ready' in m) {
          this.facts = m.ready;
          resolve();
        } else if ('failed' in m) reject(asError(m.failed));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new GoodputError('E_INTERNAL', `the policy thread exited (${code})`)));
    });
    this.running = { worker, ready };
    this.listen(worker);
    return ready;
  }

  private listen(worker: Worker): void {
    worker.on('message', (m: ThreadReply) => {
      if ('decided' in m) this.settle(m.decided.id)?.resolve(m.decided.decision);
      else if ('failed' in m && m.failed.id >= 0) this.settle(m.failed.id)?.reject(asError(m.failed));
    });
    const died = (error: Error) => {
      if (this.running?.worker === worker) this.running = undefined;
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(error);
      }
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new GoodputError('E_INTERNAL', `the policy thread exited (${code})`)));
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    this.pending.delete(id);
    return p;
  }
}

function asError(f: { message: string; code?: string }): Error {
  return f.code ? new GoodputError(f.code as ErrorCode, f.message) : new Error(f.message);
}
