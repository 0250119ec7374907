/**
 * Sia (SOSP'23) re-implemented from its paper and artifact's description: every round, an
 * integer program picks for each job one (GPU type, nodes, GPUs) configuration or none,
 * minimizing the sum of normalized goodputs raised to p < 0 plus lambda_n per job left without
 * GPUs. A job's goodput on a type it has not run on is its measured type's goodput scaled by the
 * ratio of the application's one-GPU throughputs (its bootstrap profile); a job with no model
 * yet may take one GPU of any type. Allocations other than the job's current one are discounted
 * by Pollux's re-allocation factor. Pure: the solver is injected.
 */
import type { Allocation, ClusterSnapshot } from '../../core/cluster.js';
import { ModelMemo } from '../../goodput/model-memo.js';
import type { GoodputModel } from '../../goodput/types.js';
import type { DecisionDiagnostics, Policy, PolicyDecision, Rejection } from '../policy.js';
import { allocationType, NO_CONFIGURATION, typedJobs, typeGroups, type TypedJob } from '../typed.js';
import { SCALE_GPUS } from '../goodput/scale.js';
import { goodputOn, goodputTable, type GoodputMemo } from './goodput-memo.js';
import { placeFast, placeSticky } from './placement.js';
import { configKey, siaConfigs, typeRuns, typesOf, type SiaConfig } from './configs.js';

export { siaConfigs, type SiaConfig } from './configs.js';
import { solveAssignment, type AssignmentRow, type MilpSolver } from './assignment.js';
import { priceAssignment } from './price-assignment.js';

export type { GoodputMemo } from './goodput-memo.js';

/** Sia's knobs (artifact defaults). */
export interface SiaParams {
  p: number;
  lambda_n: number;
  /** Normalized goodput^p above this is clipped. */
  clip: number;
}

export const SIA_DEFAULTS: SiaParams = { p: -0.5, lambda_n: 1.1, clip: 3000 };

/** Goodput below this counts as "no allocation possible". */
export const ZERO_GAIN = 1e-4;

/** Restart penalty (s) Sia assumes per application when discounting a change. */
const RESTART_PENALTY: Readonly<Record<string, number>> = {
  deepspeech2: 25,
  imagenet: 250,
  cifar10: 30,
  bert: 120,
  yolov3: 45,
};

function restartPenalty(key: string): number {
  return Object.hasOwn(RESTART_PENALTY, key) ? RESTART_PENALTY[key]! : 30;
}

/**
 * Above this many candidate columns (thousands of jobs) each job keeps, per type, only its best
 * configuration, the one with about half its GPUs, one GPU, and its current one: the program's
 * size (and HiGHS's time) then grows with the jobs, not with jobs x configurations.
 */
const COLUMN_BUDGET = 6000;

function thinRow(costs: Map<number, number>, configs: readonly SiaConfig[], prev: number | undefined): void {
  // The keys ascend (set in configuration order) and configurations come type by type, GPUs
  // ascending: each type's keys are one run, whose first has the fewest GPUs.
  const keys = [...costs.keys()];
  const keep = new Uint8Array(keys.length);
  for (let i = 0; i < keys.length;) {
    const type = configs[keys[i]!]!.type;
    let j = i;
    let best = i;
    while (j < keys.length && configs[keys[j]!]!.type === type) {
      if (costs.get(keys[j]!)! < costs.get(keys[best]!)!) best = j;
      j++;
    }
    keep[best] = 1;
    keep[i] = 1;
    // The one with about half the best's GPUs: the largest at most half.
    const halfGpus = configs[keys[best]!]!.gpus / 2;
    for (let k = j - 1; k >= i; k--)
      if (configs[keys[k]!]!.gpus <= halfGpus) {
        keep[k] = 1;
        break;
      }
    i = j;
  }
  keys.forEach((c, k) => {
    if (!keep[k] && c !== prev) costs.delete(c);
  });
}

/** Programs with more columns than this (after thinning) are solved by prices (price-assignment.ts), not HiGHS. */
export const PRICED_COLUMNS = 6000;

/** The Sia policy over `solver`. */
export class SiaPolicy implements Policy {
  readonly name: string = 'sia';
  /** Each placed job's configuration last round, as `type/gpus`. */
  private prevConfig = new Map<string, string>();
  /**
   * Goodput per model content and shape: equal models share it, and a model not refitted keeps
   * it; given by the maker of the instance, it outlives the instance (typed.ts OpenNodes makes a
   * new one whenever the open nodes change).
   */
  private readonly goodputs: GoodputMemo;
  /** Whether this round's cluster is large (goodput/scale.ts SCALE_GPUS): approximate goodputs. */
  private approx = false;
  /** Last round's prices per type group (price-assignment.ts), the start of this round's. */
  private prices: Float64Array | undefined;
  /** The absolute goodput the last goodputRow normalized by (samples/s). */
  protected lastMinGoodput = 1;

  constructor(
    private readonly solver: MilpSolver,
    private readonly params: SiaParams = SIA_DEFAULTS,
    goodputs: GoodputMemo = new ModelMemo(),
  ) {
    this.goodputs = goodputs;
  }

  /**
   * Weight of a job's term in the objective, given its normalized goodput per configuration
   * (Sia: 1 for every job). Subclasses weigh jobs by what they know (e.g. remaining work).
   */
  protected jobWeight(
    _job: TypedJob,
    _normalized: readonly number[],
    _configs: readonly SiaConfig[],
    _now_s: number,
  ): number {
    return 1;
  }

  decide(s: ClusterSnapshot): PolicyDecision {
    const jobs = typedJobs(s, this.name);
    const groups = typeGroups(s.nodes);
    // Configurations larger than any job may take can only be a job's previous one, which it
    // cannot hold either: left out, so that thousands of nodes do not mean thousands of columns.
    const all = siaConfigs(groups);
    let maxGpus = 1;
    for (const j of jobs) maxGpus = Math.max(maxGpus, j.max_replicas);
    const configs = all.filter((c) => c.gpus <= maxGpus);
    const index = new Map(configs.map((c, i) => [configKey(c), i]));
    const prevOf = (id: string): number | undefined => {
      const key = this.prevConfig.get(id);
      return key === undefined ? undefined : index.get(key);
    };
    this.approx = groups.reduce((n, g) => n + g.total_gpus, 0) >= SCALE_GPUS;
    const gpn = new Map(groups.map((g) => [g.type, g.gpus_per_node]));
    const rows: { id: string; costs: Map<number, number>; forced?: number }[] = [];
    const gps = jobs.map((job) => {
      const gp = this.goodputRow(job, configs, gpn);
      return { gp, min: this.lastMinGoodput, weight: this.jobWeight(job, gp, configs, s.now_s) };
    });
    // Weights relative to the round's median, so that a per-GPU cost has one scale.
    const sorted = Float64Array.from(gps, (g) => g.weight).sort();
    const median = sorted.length > 0 ? sorted[Math.floor(sorted.length / 2)]! : 1;
    const large = jobs.length * all.length > COLUMN_BUDGET;
    const zeroTerm = Math.min(Math.round(Math.pow(ZERO_GAIN, this.params.p) * 100) / 100, this.params.clip);
    const notAllowedCostsMore = zeroTerm >= this.params.lambda_n && this.perGpuCost >= 0;
    jobs.forEach((job, i) => {
      const gp = gps[i]!.gp;
      const weight = gps[i]!.weight / (median > 0 ? median : 1);
      const prev = prevOf(job.id);
      const costs = new Map<number, number>();
      // Configurations come type by type, GPUs ascending: one costing no less than a smaller one
      // of its type is dominated (more GPUs, no better objective) and never needed. Dropped only
      // in large programs: at tens of jobs the full program is the artifact's, whose choice
      // among equally good solutions the simulation turns out to be sensitive to.
      let bestOfType = Infinity;
      for (let c = 0; c < configs.length; c++) {
        if (c === 0 || configs[c]!.type !== configs[c - 1]!.type || !large) bestOfType = Infinity;
        let g = gp[c]!;
        // Not allowed (above the job's sizes): its cost is positive, it is never kept, and it
        // lowers no bestOfType below 0, so it changes nothing. Most configurations of a large
        // cluster are such.
        if (g <= ZERO_GAIN && c !== prev && weight >= 0 && notAllowedCostsMore) continue;
        if (prev !== undefined && c !== prev)
          g *= this.changeFactor(job, g * gps[i]!.min, s.now_s, configs[c]!.type !== configs[prev]!.type);
        g = Math.max(g, ZERO_GAIN);
        const a = Math.min(Math.round(Math.pow(g, this.params.p) * 100) / 100, this.params.clip);
        const cost = weight * (a - this.params.lambda_n) + this.perGpuCost * configs[c]!.gpus;
        // Nor does one of non-negative cost (leaving the job out is no worse).
        if ((cost < 0 && cost < bestOfType) || c === prev) costs.set(c, cost);
        bestOfType = Math.min(bestOfType, cost);
      }
      const keep = job.per_type.restarting && prev !== undefined && s.allocations[job.id] !== undefined;
      rows.push({ id: job.id, costs, ...(keep ? { forced: prev } : {}) });
    });
    const columns = rows.reduce((n, r) => n + r.costs.size, 0);
    if (columns > COLUMN_BUDGET) for (const r of rows) thinRow(r.costs, configs, prevOf(r.id));
    const capacity = groups.map((g) => g.total_gpus);
    const typeIndex = new Map(groups.map((g, i) => [g.type, i]));
    const uses = configs.map((c) => ({ group: typeIndex.get(c.type)!, gpus: c.gpus }));
    // Small programs: HiGHS (exact); large ones: prices. Both report the relaxation's bound.
    // Last round's prices start this round's (same groups: OpenNodes makes a new instance otherwise).
    const priced = priceAssignment(rows, uses, capacity, this.prices);
    this.prices = priced.prices;
    const exact = rows.reduce((n, r) => n + r.costs.size, 0) <= PRICED_COLUMNS;
    const chosen = exact ? solveAssignment(this.solver, rows, uses, capacity) : priced.chosen;
    const diagnostics = assignmentGap(exact ? 'exact' : 'priced', rows, chosen, priced.bound);
    this.prevConfig = new Map();
    const perType = new Map<string, { id: string; gpus: number }[]>();
    chosen.forEach((c, id) => {
      this.prevConfig.set(id, configKey(configs[c]!));
      const cfg = configs[c]!;
      const list = perType.get(cfg.type) ?? [];
      list.push({ id, gpus: cfg.gpus });
      perType.set(cfg.type, list);
    });
    const out: Record<string, Allocation> = {};
    const nodeGpus = s.nodes.map((n) => n.gpus);
    for (const g of groups) {
      const list = perType.get(g.type) ?? [];
      Object.assign(
        out,
        this.stickyPlacement ? placeSticky(g, list, nodeGpus, s.allocations) : placeFast(g, list, nodeGpus),
      );
    }
    const rejections: Record<string, Rejection> = {};
    for (const j of jobs) if (!out[j.id]) rejections[j.id] = NO_CONFIGURATION;
    this.goodputs.nextRound();
    return { allocations: out, rejections, diagnostics };
  }

  /**
   * Whether a job whose type and GPU count are unchanged keeps its nodes (no restart) before
   * the others are placed. Sia: no (its fast placement re-packs every round).
   */
  protected readonly stickyPlacement: boolean = false;

  /**
   * Discount of a configuration other than the job's current one, whose goodput is
   * `goodput` samples/s. Sia: Pollux's re-allocation factor, (age - restarts x penalty) / (age +
   * penalty), 1 while the job is younger than the penalty. `typeChanged`: the configuration is on
   * another GPU type than the current one (Sia: no difference).
   */
  protected changeFactor(job: TypedJob, _goodput: number, now_s: number, _typeChanged: boolean): number {
    const age = now_s - job.submitted_at_s;
    const pen = restartPenalty(job.profile_key ?? '');
    return age < pen ? 1 : Math.max(age - job.restarts * pen, 0) / (age + pen);
  }

  /** Goodput of one GPU of `type` for a job without a model on any type (Sia: 1 on every type). */
  protected unmodelledGoodput(_job: TypedJob, _type: string): number {
    return 1;
  }

  /**
   * A model of `job` on `type`, where it has none, other than Sia's one-GPU ratio rule (Sia:
   * none, so the ratio rule values every configuration there).
   */
  protected unmeasuredModel(_job: TypedJob, _type: string): GoodputModel | undefined {
    return undefined;
  }

  /** Objective cost of each GPU a configuration uses, in median-job units (Sia: 0). */
  protected get perGpuCost(): number {
    return 0;
  }

  /** Normalized goodput of `job` for every configuration (ZERO_GAIN where not allowed). */
  protected goodputRow(job: TypedJob, configs: readonly SiaConfig[], gpn: ReadonlyMap<string, number>): number[] {
    // Per type (by position in gpn) rather than per configuration: thousands of rows a round.
    const types = typesOf(gpn);
    const runs = typeRuns(configs, types);
    let cap = job.max_replicas === 1 ? 1 : -Infinity;
    if (job.max_replicas !== 1) {
      const profiled = job.per_type.max_profiled;
      for (let i = 0; i < types.length; i++)
        cap = Math.max(cap, Math.min(Math.max(2 * (profiled[types[i]!] ?? 0), 1), job.max_replicas));
    }
    // Arrays of one kind made by loops, no closures: the compiled code of this function (it runs
    // per job, with the goodput search inlined) was thrown away on a "wrong map" and compiled
    // again two or three times in a first round at 2,048 GPUs, tens of ms of compiling each.
    const n = types.length;
    const models = new Array<GoodputModel | undefined>(n);
    let source = -1;
    for (let i = 0; i < n; i++) {
      models[i] = job.per_type.model(types[i]!);
      if (source < 0 && models[i] !== undefined) source = i;
    }
    // The model each type's configurations are valued by: its own, else a transferred one, else
    // (with a source) the source's scaled by the one-GPU ratio, else none.
    const valued = new Array<GoodputModel | undefined>(n);
    for (let i = 0; i < n; i++)
      valued[i] = models[i] ?? (source < 0 ? undefined : this.unmeasuredModel(job, types[i]!));
    // Each model's table is looked up once per row (a lookup keys the model by its content).
    const variant = this.approx ? '~' : '';
    const tables = new Array<Map<number, number> | undefined>(n);
    const one = job.per_type.one_gpu_samples_per_s;
    // Per type, the ratio of its one-GPU rate to the source's (the ratio rule).
    const ratios = new Float64Array(n);
    if (source >= 0) for (let i = 0; i < n; i++) ratios[i] = one[types[i]!]! / one[types[source]!]!;
    const sourceGpn = source < 0 ? 1 : gpn.get(types[source]!)!;
    // Only configurations within the cap are valued: each type's run of configurations ascends
    // in GPUs, so they are a prefix of it (a few of the tens a large cluster offers).
    const row = new Array<number>(configs.length).fill(ZERO_GAIN);
    const valuedAt: number[] = [];
    let min = Infinity;
    for (let i = 0; i < types.length; i++) {
      for (let k = runs[2 * i]!; k < runs[2 * i + 1]! && configs[k]!.gpus <= cap; k++) {
        const c = configs[k]!;
        let g: number;
        const own = valued[i];
        if (own)
          g = goodputOn(
            (tables[i] ??= this.goodputs.get(own, variant, goodputTable)),
            this.approx,
            own,
            job.fixed_batch_size,
            c.nodes,
            c.gpus,
          );
        else if (source < 0) g = c.gpus === 1 ? this.unmodelledGoodput(job, c.type) : 0;
        else {
          const src = models[source]!;
          const nodes = Math.ceil(c.gpus / sourceGpn);
          const t = (tables[source] ??= this.goodputs.get(src, variant, goodputTable));
          g = goodputOn(t, this.approx, src, job.fixed_batch_size, nodes, c.gpus) * ratios[i]!;
        }
        row[k] = g;
        valuedAt.push(k);
        if (g > ZERO_GAIN && g < min) min = g;
      }
    }
    if (min === Infinity) min = 1;
    this.lastMinGoodput = min;
    // Indexed loops in this function: it runs per job, the first ones before the JIT compiles it.
    for (let i = 0; i < valuedAt.length; i++) {
      const k = valuedAt[i]!;
      row[k] = row[k]! > ZERO_GAIN ? row[k]! / min : ZERO_GAIN;
    }
    return row;
  }
}

/**
 * The objective of the chosen configurations (the program minimizes; reported negated, larger is
 * better) against the bound of its linear relaxation (price-assignment.ts).
 */
function assignmentGap(
  method: string,
  rows: readonly AssignmentRow[],
  chosen: ReadonlyMap<string, number>,
  lower: number,
): DecisionDiagnostics {
  let cost = 0;
  for (const r of rows) {
    const c = chosen.get(r.id);
    if (c !== undefined) cost += r.costs.get(c) ?? 0;
  }
  const gap = Math.max(0, (cost - lower) / Math.max(Math.abs(lower), 1e-12));
  return { method, objective: -cost, bound: -lower, gap };
}

export { placeFast, placeSticky } from './placement.js';

/** The type a Sia decision put `id` on, for tests. */
export { allocationType };
