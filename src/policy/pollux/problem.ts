/**
 * The allocation problem Pollux searches (pollux-spec §4.3): a state is a J x N matrix of
 * replica counts (job-major, jobs in priority order, nodes in preference order) stored in an
 * Int32Array slice. This module holds everything per round that the genetic search needs:
 * objectives, repair, mutation and crossover. Pure: randomness comes from the caller's Random.
 */
import type { Random } from '../../core/random.js';
import { MAX_NODES_PER_JOB, type ProblemJob } from './problem-job.js';

/**
 * One round's search state and operators over the jobs of problem-job.ts (objectives, repair,
 * mutation, crossover).
 */
export class PolluxProblem {
  readonly numJobs: number;
  readonly numNodes: number;
  /** Cells per state (J x N). */
  readonly size: number;
  private readonly jobs: readonly ProblemJob[];
  private readonly capacity: Int32Array;
  private readonly totalGpus: number;
  private readonly base: Int32Array;
  private readonly avoidInterference: boolean;
  private readonly anyPinned: boolean;
  private readonly anyMinReplicas: boolean;
  /** speedup memo: job j, (n, r) at j * stride + n * (maxR + 1) + r; NaN = not computed yet. */
  private readonly memo: Float64Array;
  private readonly maxR: number;
  private readonly stride: number;
  private readonly scale: number;
  // Scratch buffers (the search is synchronous).
  private readonly free: Int32Array;
  private readonly present: Int32Array;
  private readonly distList: Int32Array;
  private readonly colSum: Int32Array;
  private readonly baseR: Int32Array;
  /** Which state rowR/rowN/colSum describe (set by repair, cleared by mutate/crossover). */
  private statsX: Int32Array | undefined;
  private statsOff = -1;
  private readonly order: Int32Array;
  private readonly rowR: Int32Array;
  private readonly rowN: Int32Array;

  /**
   * @param capacity GPUs of each node, in node preference order.
   * @param base current allocation (J x N), the reference for restart penalties and mutation.
   */
  constructor(jobs: readonly ProblemJob[], capacity: Int32Array, base: Int32Array, avoidInterference: boolean) {
    this.jobs = jobs;
    this.numJobs = jobs.length;
    this.numNodes = capacity.length;
    this.size = this.numJobs * this.numNodes;
    this.capacity = capacity;
    this.base = base;
    this.avoidInterference = avoidInterference;
    this.anyPinned = jobs.some((job) => job.pinned);
    this.anyMinReplicas = jobs.some((job) => !job.pinned && job.min_replicas > 0);
    let total = 0;
    for (let n = 0; n < capacity.length; n++) total += capacity[n] as number;
    this.totalGpus = total;
    // Every replica asks for one GPU: dominant share d = 1 / total, scaled speedup = S * d * N.
    this.scale = total > 0 ? (1 / total) * this.numNodes : 0;
    let maxR = total;
    for (let j = 0; j < this.numJobs; j++) {
      let r = 0;
      for (let n = 0; n < this.numNodes; n++) r += base[j * this.numNodes + n] as number;
      maxR = Math.max(maxR, r);
    }
    this.maxR = maxR;
    this.stride = (this.numNodes + 1) * (maxR + 1);
    this.memo = new Float64Array(this.numJobs * this.stride).fill(NaN);
    this.free = new Int32Array(this.numNodes);
    this.present = new Int32Array(this.numNodes);
    this.distList = new Int32Array(this.numJobs);
    this.colSum = new Int32Array(this.numNodes);
    this.baseR = new Int32Array(this.numJobs);
    for (let j = 0; j < this.numJobs; j++) {
      for (let c = 0; c < this.numNodes; c++)
        this.baseR[j] = (this.baseR[j] as number) + (base[j * this.numNodes + c] as number);
    }
    this.order = new Int32Array(this.numNodes);
    this.rowR = new Int32Array(this.numJobs);
    this.rowN = new Int32Array(this.numJobs);
  }

  /** Speedup of job j at (n, r), memoized for the round. */
  speedup(j: number, n: number, r: number): number {
    if (r > this.maxR || n > this.numNodes) return (this.jobs[j] as ProblemJob).speedup(n, r);
    const k = j * this.stride + n * (this.maxR + 1) + r;
    let v = this.memo[k] as number;
    if (v !== v) {
      v = r === 0 ? 0 : (this.jobs[j] as ProblemJob).speedup(n, r);
      this.memo[k] = v;
    }
    return v;
  }

  /**
   * Objectives of the state at `X[off .. off + size)`, both to be maximized: [0] the harmonic
   * mean of (penalized scaled speedup + 0.001), [1] cluster utility (sum of speedups per GPU of
   * the nodes in use). Written into out[0], out[1].
   */
  evaluate(X: Int32Array, off: number, out: Float64Array): void {
    if (X === this.statsX && off === this.statsOff) {
      this.evaluateRepaired(X, off, out);
      return;
    }
    const J = this.numJobs;
    const N = this.numNodes;
    const base = this.base;
    let inv = 0;
    let sumSpeedup = 0;
    const nodeUsed = this.present;
    nodeUsed.fill(0);
    for (let j = 0; j < J; j++) {
      const row = off + j * N;
      const brow = j * N;
      let r = 0;
      let n = 0;
      let changed = false;
      for (let c = 0; c < N; c++) {
        const v = X[row + c] as number;
        if (v > 0) {
          r += v;
          n++;
          nodeUsed[c] = 1;
        }
        if (v !== base[brow + c]) changed = true;
      }
      const s = this.speedup(j, n, r);
      sumSpeedup += s;
      let scaled = s * this.scale;
      if (changed) scaled *= (this.jobs[j] as ProblemJob).restart_factor;
      inv += 1 / (scaled + 1e-3);
    }
    let activeGpus = 0;
    for (let c = 0; c < N; c++) if (nodeUsed[c]) activeGpus += this.capacity[c] as number;
    out[0] = J > 0 ? 1 / (inv / J) : 0;
    out[1] = activeGpus > 0 ? sumSpeedup / activeGpus : 0;
  }

  /** evaluate() for the state repair() just produced, reusing its row and column sums. */
  private evaluateRepaired(X: Int32Array, off: number, out: Float64Array): void {
    const J = this.numJobs;
    const N = this.numNodes;
    const base = this.base;
    const rowR = this.rowR;
    const rowN = this.rowN;
    let inv = 0;
    let sumSpeedup = 0;
    for (let j = 0; j < J; j++) {
      const r = rowR[j] as number;
      let changed = r !== this.baseR[j];
      if (!changed) {
        const row = off + j * N;
        const brow = j * N;
        for (let c = 0; c < N; c++) {
          if (X[row + c] !== base[brow + c]) {
            changed = true;
            break;
          }
        }
      }
      const s = this.speedup(j, rowN[j] as number, r);
      sumSpeedup += s;
      let scaled = s * this.scale;
      if (changed) scaled *= (this.jobs[j] as ProblemJob).restart_factor;
      inv += 1 / (scaled + 1e-3);
    }
    let activeGpus = 0;
    for (let c = 0; c < N; c++) if ((this.colSum[c] as number) > 0) activeGpus += this.capacity[c] as number;
    out[0] = J > 0 ? 1 / (inv / J) : 0;
    out[1] = activeGpus > 0 ? sumSpeedup / activeGpus : 0;
  }

  /**
   * Makes a state feasible (pollux-spec §4.4 repair): pinned rows restored; interference
   * avoidance (at most one multi-node job per node, highest priority wins); per-job replica cap
   * truncated over the job's nodes in random order (and at most 16 nodes); node capacity
   * filled in priority order; rows below min_replicas zeroed. Idempotent on its own output,
   * and then it draws no random numbers.
   */
  repair(X: Int32Array, off: number, rng: Random): void {
    const J = this.numJobs;
    const N = this.numNodes;
    const jobs = this.jobs;
    if (this.anyPinned) {
      for (let j = 0; j < J; j++) {
        if ((jobs[j] as ProblemJob).pinned) {
          for (let c = 0; c < N; c++) X[off + j * N + c] = this.base[j * N + c] as number;
        }
      }
    }
    const rowR = this.rowR;
    const rowN = this.rowN;
    const colSum = this.colSum;
    colSum.fill(0);
    const dist = this.distList;
    let distributedJobs = 0;
    for (let j = 0; j < J; j++) {
      const row = off + j * N;
      let r = 0;
      let n = 0;
      for (let c = 0; c < N; c++) {
        const v = X[row + c] as number;
        if (v > 0) {
          r += v;
          n++;
          colSum[c] = (colSum[c] as number) + v;
        }
      }
      rowR[j] = r;
      rowN[j] = n;
      if (n > 1) dist[distributedJobs++] = j;
    }
    // Interference avoidance; conflicts are only possible when two jobs span several nodes.
    if (this.avoidInterference && distributedJobs > 1) {
      for (let c = 0; c < N; c++) {
        let seen = false;
        for (let i = 0; i < distributedJobs; i++) {
          const j = dist[i] as number;
          const k = off + j * N + c;
          const v = X[k] as number;
          if (v <= 0) continue;
          if (!seen) seen = true;
          else if (!(jobs[j] as ProblemJob).pinned) {
            rowR[j] = (rowR[j] as number) - v;
            rowN[j] = (rowN[j] as number) - 1;
            colSum[c] = (colSum[c] as number) - v;
            X[k] = 0;
          }
        }
      }
    }
    const order = this.order;
    for (let j = 0; j < J; j++) {
      const job = jobs[j] as ProblemJob;
      if (job.pinned) continue;
      if ((rowR[j] as number) <= job.max_replicas && (rowN[j] as number) <= MAX_NODES_PER_JOB) continue;
      const row = off + j * N;
      // A random order of the job's nodes; only the occupied ones matter.
      let m = 0;
      for (let c = 0; c < N; c++) if ((X[row + c] as number) > 0) order[m++] = c;
      for (let i = m - 1; i > 0; i--) {
        const r = Math.floor(rng.next() * (i + 1));
        const t = order[i] as number;
        order[i] = order[r] as number;
        order[r] = t;
      }
      let kept = 0;
      let keptNodes = 0;
      for (let i = 0; i < m; i++) {
        const k = row + (order[i] as number);
        const v = X[k] as number;
        let allowed = keptNodes < MAX_NODES_PER_JOB ? Math.min(v, job.max_replicas - kept) : 0;
        if (allowed < 0) allowed = 0;
        X[k] = allowed;
        const col = order[i] as number;
        colSum[col] = (colSum[col] as number) - (v - allowed);
        if (allowed > 0) {
          kept += allowed;
          keptNodes++;
        }
      }
      rowR[j] = kept;
      rowN[j] = keptNodes;
    }
    for (let c = 0; c < N; c++) {
      const cap = this.capacity[c] as number;
      if ((colSum[c] as number) <= cap) continue;
      let left = cap;
      for (let j = 0; j < J; j++) {
        const k = off + j * N + c;
        const v = X[k] as number;
        if (v <= 0) continue;
        if ((jobs[j] as ProblemJob).pinned) {
          left -= v;
          continue;
        }
        const allowed = left > 0 ? Math.min(v, left) : 0;
        X[k] = allowed;
        left -= allowed;
        rowR[j] = (rowR[j] as number) - (v - allowed);
        if (allowed === 0) rowN[j] = (rowN[j] as number) - 1;
      }
      colSum[c] = cap - Math.max(left, 0);
    }
    if (this.anyMinReplicas) {
      for (let j = 0; j < J; j++) {
        const job = jobs[j] as ProblemJob;
        if (job.pinned || job.min_replicas <= 0 || (rowR[j] as number) >= job.min_replicas) continue;
        for (let c = 0; c < N; c++) {
          const k = off + j * N + c;
          colSum[c] = (colSum[c] as number) - (X[k] as number);
          X[k] = 0;
        }
        rowR[j] = 0;
        rowN[j] = 0;
      }
    }
    // rowR, rowN and colSum now describe X[off..]: evaluate() may reuse them.
    this.statsX = X;
    this.statsOff = off;
  }

  /**
   * Mutation (pollux-spec §4.4): rows reset to the base row (p 0.1); rows thinned (p 0.1, each
   * cell zeroed with p 0.1); then on nodes with a free GPU each cell grows, with probability
   * p1 + p2 - p1 p2 (p1 = 1/J, p2 = 1/#jobs on the node if the job is there), to a uniform
   * count in [current, node GPUs]. Returns whether X changed.
   */
  mutate(X: Int32Array, off: number, rng: Random): boolean {
    this.statsOff = -1;
    const J = this.numJobs;
    const N = this.numNodes;
    let changed = false;
    for (let j = 0; j < J; j++) {
      if (rng.next() >= 0.1) continue;
      for (let c = 0; c < N; c++) {
        const b = this.base[j * N + c] as number;
        if (X[off + j * N + c] !== b) {
          X[off + j * N + c] = b;
          changed = true;
        }
      }
    }
    for (let j = 0; j < J; j++) {
      if (rng.next() >= 0.1) continue;
      const row = off + j * N;
      for (let c = 0; c < N; c++) {
        if (rng.next() < 0.1 && X[row + c] !== 0) {
          X[row + c] = 0;
          changed = true;
        }
      }
    }
    const free = this.free;
    const present = this.present;
    for (let c = 0; c < N; c++) {
      free[c] = this.capacity[c] as number;
      present[c] = 0;
    }
    for (let j = 0; j < J; j++) {
      const row = off + j * N;
      for (let c = 0; c < N; c++) {
        const v = X[row + c] as number;
        if (v > 0) {
          free[c] = (free[c] as number) - v;
          present[c] = (present[c] as number) + 1;
        }
      }
    }
    const p1 = 1 / J;
    for (let c = 0; c < N; c++) {
      if ((free[c] as number) < 1) continue;
      const cap = this.capacity[c] as number;
      const p2 = 1 / Math.max(present[c] as number, 1);
      const pBoth = p1 + p2 - p1 * p2;
      for (let j = 0; j < J; j++) {
        const k = off + j * N + c;
        const v = X[k] as number;
        // One trial per cell: p1 + p2 - p1 p2 for jobs on the node, p1 for the others.
        if (rng.next() >= (v > 0 ? pBoth : p1) || v >= cap) continue;
        const nv = rng.int(v, cap);
        if (nv !== v) {
          X[k] = nv;
          changed = true;
        }
      }
    }
    return changed;
  }

  /**
   * Single-point crossover over the job axis: rows of jobs with index < c (c uniform in
   * 0..J-1) are swapped between the two children, which start as copies of their parents.
   */
  crossover(A: Int32Array, aOff: number, B: Int32Array, bOff: number, rng: Random): boolean {
    this.statsOff = -1;
    const cut = rng.int(0, this.numJobs - 1) * this.numNodes;
    let changed = false;
    for (let i = 0; i < cut; i++) {
      const t = A[aOff + i] as number;
      const u = B[bOff + i] as number;
      if (t !== u) {
        A[aOff + i] = u;
        B[bOff + i] = t;
        changed = true;
      }
    }
    return changed;
  }

  /** Total GPUs of the cluster. */
  get gpus(): number {
    return this.totalGpus;
  }
}
