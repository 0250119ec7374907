/**
 * A registered policy that decides in a worker thread of its own, so that a round of a large
 * cluster does not hold the server's event loop while reports and API calls wait (issue #49): at
 * 16,384 GPUs a decide takes 100-200 ms in the first rounds after a start and 20-25 ms later.
 * The policy lives in the worker between rounds (its memos and state) and decides the snapshots
 * it is sent, in order. Sending one is a structured copy of plain data (snapshot-wire.ts), made
 * here: 25-60 ms at that size (3,000 active jobs, 5 MB as JSON), so the thread pays where decides
 * are long, not in a round of a small cluster. A large snapshot goes in parts of WIRE_CHUNK jobs,
 * the caller's `pause` between them: copied whole, it held the server's event loop, and the
 * reports that arrived meanwhile waited (bench:scale's report p99 during rounds was over 50 ms).
 * A worker that dies (a bug, out of memory) fails the decides under way; the next decide starts
 * a fresh one, as a server restart would.
 */
import { Worker } from 'node:worker_threads';
import type { ClusterSnapshot } from '../../core/cluster.js';
import { GoodputError, type ErrorCode } from '../../core/errors.js';
import type { PolicyDecision, PolicyOptions } from '../../policy/policy.js';
import { snapshotTypes, toWireJobs, type WireJob, type WireSnapshot } from './snapshot-wire.js';

/** Jobs per part of a snapshot sent to the worker: a few milliseconds of copying. */
const WIRE_CHUNK = 250;

/** What the worker makes its policy from (workerData): registry.ts `createSharedPolicy`'s arguments. */
export interface PolicyThreadInit {
  name: string;
  /** Without a solver: the worker loads its own where the policy uses one. */
  options: Omit<PolicyOptions, 'solver' | 'memo_bank'>;
  /** Memos saved before (JSON of goodput/memo-bank.ts MemoSnapshot): the worker's bank starts from them. */
  memo?: string;
}

/**
 * A part of a snapshot to decide, `id` pairing it with its reply: its head (all but the jobs),
 * then its jobs in order, in one or more parts, then its end. The worker decides at the end.
 */
export type ThreadRequest =
  | { id: number; head: Omit<WireSnapshot, 'jobs'> }
  | { id: number; jobs: readonly WireJob[] }
  | { id: number; end: true }
  | { id: number; save_memo: true };

/** The worker's messages: its policy's facts once made, then one decision or failure per request. */
export type ThreadReply =
  | { ready: PolicyFacts }
  | { decided: { id: number; decision: PolicyDecision } }
  | { failed: { id: number; message: string; code?: string } }
  | { memo: { id: number; json: string | null } };

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
  /** Memo saves asked of the worker, by request id. */
  private readonly memoPending = new Map<number, (json: string | undefined) => void>();
  private nextId = 0;
  /** The snapshot being sent, if any: the next one is sent after it (decisions keep their order). */
  private sending: Promise<void> = Promise.resolve();
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

  /**
   * The policy's decision on `snapshot`, decided in the worker. `pause` is awaited between the
   * parts of a large snapshot (the controller's turns: other work runs meanwhile); by default
   * the parts go at once.
   */
  async decide(snapshot: ClusterSnapshot, pause: () => Promise<void> = async () => {}): Promise<PolicyDecision> {
    if (this.closed) throw new GoodputError('E_INTERNAL', 'the policy thread is closed');
    if (!this.running) await this.launch();
    await this.running!.ready;
    const id = this.nextId++;
    const worker = this.running!.worker;
    const decided = new Promise<PolicyDecision>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    // A worker that dies while the parts are sent rejects this before the caller holds it: handled
    // here (the caller still gets the rejection), not an unhandled rejection that ends the server.
    decided.catch(() => undefined);
    const sent = this.sending.then(() => send(worker, id, snapshot, pause));
    this.sending = sent.catch(() => undefined);
    try {
      await sent;
    } catch (error) {
      this.settle(id); // nothing to answer it: a snapshot that cannot be copied (a bug)
      throw error;
    }
    return decided;
  }

  /**
   * The policy's memos as JSON (goodput/memo-bank.ts MemoSnapshot), made in the worker after the
   * decides asked before; undefined where it holds none, no worker runs or it dies meanwhile.
   */
  async saveMemo(): Promise<string | undefined> {
    const running = this.running;
    if (this.closed || !running) return undefined;
    await running.ready;
    const id = this.nextId++;
    const saved = new Promise<string | undefined>((resolve) => this.memoPending.set(id, resolve));
    const sent = this.sending.then(() => running.worker.postMessage({ id, save_memo: true } satisfies ThreadRequest));
    this.sending = sent.catch(() => undefined);
    return sent.then(
      () => saved,
      () => undefined,
    );
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
      else if ('memo' in m) this.settleMemo(m.memo.id, m.memo.json ?? undefined);
    });
    const died = (error: Error) => {
      if (this.running?.worker === worker) this.running = undefined;
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(error);
      }
      for (const id of this.memoPending.keys()) this.settleMemo(id, undefined);
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new GoodputError('E_INTERNAL', `the policy thread exited (${code})`)));
  }

  private settleMemo(id: number, json: string | undefined): void {
    this.memoPending.get(id)?.(json);
    this.memoPending.delete(id);
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    this.pending.delete(id);
    return p;
  }
}

/**
 * Sends `snapshot` to `worker` as request `id`, in parts of WIRE_CHUNK jobs with `pause` between
 * them. A worker that dies meanwhile has failed the request already (PolicyThread.listen); the
 * parts left go nowhere.
 */
async function send(worker: Worker, id: number, snapshot: ClusterSnapshot, pause: () => Promise<void>): Promise<void> {
  const { jobs, ...head } = snapshot;
  const types = snapshotTypes(snapshot);
  worker.postMessage({ id, head } satisfies ThreadRequest);
  for (let k = 0; k < jobs.length; k += WIRE_CHUNK) {
    if (k > 0) await pause();
    worker.postMessage({ id, jobs: toWireJobs(jobs.slice(k, k + WIRE_CHUNK), types) } satisfies ThreadRequest);
  }
  worker.postMessage({ id, end: true } satisfies ThreadRequest);
}

function asError(f: { message: string; code?: string }): Error {
  return f.code ? new GoodputError(f.code as ErrorCode, f.message) : new Error(f.message);
}
