/**
 * The assignment program of the typed policies (assignment.ts) solved by prices instead of an
 * integer program, for programs too large for HiGHS within a round (issue #49; as CvxCluster
 * does): a price per GPU type group is raised until each group's demand fits (all groups'
 * prices bisected at once on the Lagrangian dual of the linear relaxation, then subgradient
 * steps), then jobs are placed greedily at
 * those prices, most valuable first, and left-over GPUs go to the jobs still left out. The dual's
 * best value bounds the optimum from below, so every decision knows its gap. Pure.
 */
import type { AssignmentRow, ConfigUse } from './assignment.js';
import { sortedIndices } from './sorted-indices.js';

/** A choice of configuration per job, its objective and a bound no choice can beat. */
export interface PricedAssignment {
  chosen: Map<string, number>;
  /** Sum of the chosen configurations' costs (minimized). */
  objective: number;
  /** Lower bound of the program's optimum (the linear relaxation's dual, at the best prices found). */
  bound: number;
  /** The best prices found, per group: the next round's start (`start` of priceAssignment). */
  prices: Float64Array;
}

/** Flat columns of the rows: row r's columns are start[r] .. start[r + 1] - 1. */
interface Columns {
  start: Int32Array;
  config: Int32Array;
  cost: Float64Array;
}

/**
 * Polyak steps per round, and a greedy placement at the prices every PLACE_EVERY of them. 40 and
 * 10 before issue #49's speed work; 24 and 6 cost 40% fewer duals for the same objectives
 * (within 0.2% summed over bench:scale's 8 rounds at 2,048 and 8,192 GPUs of four types).
 */
const POLYAK_STEPS = 24;
const PLACE_EVERY = 6;

/**
 * Relative distance of the priced placement from the bound below which the fallback placement
 * (`byEfficiency`) is not tried. Chosen on bench:scale's four-type clusters of 4,096, 8,192 and
 * 16,384 GPUs (issue #49; not the 2,048 one it is reported on): the fallback never beat a
 * placement within 0.09% of the bound and beat every one 0.46% or more from it.
 */
const FALLBACK_GAP = 0.002;

function flatten(rows: readonly AssignmentRow[]): Columns {
  // Map.forEach, not for...of: no [key, value] array per column (tens of thousands a round).
  let n = 0;
  for (let i = 0; i < rows.length; i++) {
    const forced = rows[i]!.forced;
    rows[i]!.costs.forEach((x, c) => {
      if (x < 0 || c === forced) n++;
    });
  }
  const start = new Int32Array(rows.length + 1);
  const config = new Int32Array(n);
  const cost = new Float64Array(n);
  let k = 0;
  const add = (x: number, c: number): void => {
    if (x < 0) {
      config[k] = c;
      cost[k++] = x;
    }
  };
  for (let i = 0; i < rows.length; i++) {
    start[i] = k;
    // Forced rows are placed first, outside the prices.
    if (rows[i]!.forced === undefined) rows[i]!.costs.forEach(add);
  }
  start[rows.length] = k;
  return { start, config: config.subarray(0, k), cost: cost.subarray(0, k) };
}

/**
 * Chosen configuration per job id for `rows` over `configs` within `capacity` GPUs per group,
 * by prices (see the file's comment). Forced configurations are honoured first (they may exceed
 * a group's capacity, as in the integer program they make it infeasible; here the others share
 * what is left).
 */
export function priceAssignment(
  rows: readonly AssignmentRow[],
  configs: readonly ConfigUse[],
  capacity: readonly number[],
  start?: Readonly<Float64Array>,
): PricedAssignment {
  const groups = capacity.length;
  const left = [...capacity];
  const chosen = new Map<string, number>();
  let objective = 0;
  let forcedCost = 0;
  for (const r of rows) {
    if (r.forced === undefined) continue;
    const use = configs[r.forced]!;
    left[use.group]! -= use.gpus;
    chosen.set(r.id, r.forced);
    const cost = r.costs.get(r.forced) ?? 0;
    objective += cost;
    forcedCost += cost;
  }
  const cols = flatten(rows);
  const group = Int32Array.from(configs, (c) => c.group);
  const gpus = Float64Array.from(configs, (c) => c.gpus);
  const cap = left.map((x) => Math.max(0, x));
  const price = new Float64Array(groups);
  const demand = new Float64Array(groups);
  // The dual at `price`: each row takes its best reduced cost (or nothing); demand per group.
  // Per column: its group and GPUs (the dual's inner loop reads nothing else).
  const colGroup = new Int32Array(cols.config.length);
  const colGpus = new Float64Array(cols.config.length);
  for (let k = 0; k < cols.config.length; k++) {
    colGroup[k] = group[cols.config[k]!]!;
    colGpus[k] = gpus[cols.config[k]!]!;
  }
  const dual = (): number => {
    let value = rowsDual(cols, rows.length, price, colGroup, colGpus, demand);
    for (let g = 0; g < groups; g++) value -= price[g]! * cap[g]!;
    return value;
  };
  const warm = start !== undefined && start.length === groups;
  if (warm) price.set(start);
  let bound = dual();
  // Largest useful price: the most any column saves per GPU.
  let top = 0;
  for (let k = 0; k < cols.cost.length; k++) top = Math.max(top, -cols.cost[k]! / colGpus[k]!);
  // Bisections of every group's price at once (one dual per step serves all groups; a group's
  // demand moves mostly with its own price), then the Polyak steps below refine them together.
  // From a start (last round's prices: a round changes few jobs), within 4x of it.
  const lo = new Float64Array(groups);
  const hi = new Float64Array(groups).fill(top * 1.01 + 1e-9);
  let iterations = 16;
  if (warm) {
    // A group's bracket becomes [p/4, 4p] where its demand crosses its capacity within it.
    const low = new Uint8Array(groups);
    for (let g = 0; g < groups; g++) price[g] = start[g]! / 4;
    bound = Math.max(bound, dual());
    for (let g = 0; g < groups; g++) low[g] = start[g]! > 0 && demand[g]! > cap[g]! ? 1 : 0;
    for (let g = 0; g < groups; g++) price[g] = Math.min(start[g]! * 4, hi[g]!);
    bound = Math.max(bound, dual());
    let all = true;
    for (let g = 0; g < groups; g++) {
      if (low[g] && demand[g]! <= cap[g]!) {
        lo[g] = start[g]! / 4;
        hi[g] = price[g]!;
      } else all = false;
    }
    if (all) iterations = 8;
  }
  for (let it = 0; it < iterations; it++) {
    for (let g = 0; g < groups; g++) price[g] = (lo[g]! + hi[g]!) / 2;
    bound = Math.max(bound, dual());
    for (let g = 0; g < groups; g++) {
      if (demand[g]! > cap[g]!) lo[g] = price[g]!;
      else hi[g] = price[g]!;
    }
  }
  price.set(hi);
  bound = Math.max(bound, dual());
  // Greedy placement at the prices: rows by their best reduced cost (most negative first), each
  // takes its best configuration at the prices that still fits; then, with the left-over GPUs,
  // the rows still out take their cheapest configuration that fits.
  const place = (): { picks: Int32Array; cost: number } => {
    const room = Float64Array.from(cap);
    const picks = new Int32Array(rows.length).fill(-1);
    const best = bestReduced(cols, rows.length, price, colGroup, colGpus);
    const out: number[] = [];
    for (let r = 0; r < rows.length; r++) if (best[r]! < 0) out.push(r);
    const order = sortedIndices(out.map((r) => best[r]!));
    for (let i = 0; i < order.length; i++) order[i] = out[order[i]!]!;
    const use: Use = { cols, group, gpus, price, room, picks };
    let cost = 0;
    for (let i = 0; i < order.length; i++) cost += take(use, order[i]!, true);
    for (let r = 0; r < rows.length; r++)
      if (picks[r] === -1 && cols.start[r + 1]! > cols.start[r]!) cost += take(use, r, false);
    return { picks, cost };
  };
  let placed = place();
  // The bound: Polyak subgradient steps on the dual from the bisection's prices, towards the
  // placement's cost (a dual value never passes it); keeps the best dual value and, where a
  // placement at better prices costs less, that placement.
  const sub = new Float64Array(groups);
  let theta = 1;
  let stale = 0;
  let bestPrice = Float64Array.from(price);
  for (let it = 0; it < POLYAK_STEPS; it++) {
    const value = dual();
    if (value > bound + 1e-12 * Math.abs(bound)) {
      bound = value;
      bestPrice = Float64Array.from(price);
      stale = 0;
    } else if (++stale >= 4) {
      theta /= 2;
      stale = 0;
    }
    let norm = 0;
    for (let g = 0; g < groups; g++) {
      sub[g] = demand[g]! - cap[g]!;
      if (price[g] === 0 && sub[g]! < 0) sub[g] = 0;
      norm += sub[g]! * sub[g]!;
    }
    const target = placed.cost;
    if (norm === 0 || target - value <= 1e-9 * Math.abs(target)) break;
    const step = (theta * (target - value)) / norm;
    for (let g = 0; g < groups; g++) price[g] = Math.max(0, price[g]! + step * sub[g]!);
    if (it % PLACE_EVERY === PLACE_EVERY - 1) {
      const again = place();
      if (again.cost < placed.cost) placed = again;
    }
  }
  price.set(bestPrice);
  const atBest = place();
  if (atBest.cost < placed.cost) placed = atBest;
  // Without prices: columns by saving per GPU, each row's first that fits (better where the
  // prices have not converged, e.g. many jobs tied at a type's price). No placement costs less
  // than the bound, so where the priced one is within FALLBACK_GAP of it the fallback can gain
  // at most that much: it is not tried (a sort of every column, a tenth of a first round).
  if (placed.cost - bound > FALLBACK_GAP * Math.abs(bound)) {
    const efficient = byEfficiency(cols, colGroup, colGpus, cap, rows.length);
    if (efficient.cost < placed.cost) placed = efficient;
  }
  for (let r = 0; r < rows.length; r++) {
    const pick = placed.picks[r]!;
    if (pick >= 0 && !chosen.has(rows[r]!.id)) {
      left[configs[pick]!.group]! -= configs[pick]!.gpus;
      chosen.set(rows[r]!.id, pick);
    }
  }
  objective += placed.cost;
  return { chosen, objective, bound: bound + forcedCost, prices: bestPrice };
}

/**
 * The dual's rows at `price`: the sum of each row's best reduced cost (or 0), and each group's
 * demand (written to `demand`). A function of its own, not a loop inside priceAssignment's
 * closures: V8 compiled that loop on the stack while the first call ran (5,000 rows) and threw
 * the code away at each call's end, whose comparisons had not run yet (issue #49).
 */
function rowsDual(
  cols: Columns,
  rowCount: number,
  price: Float64Array,
  colGroup: Int32Array,
  colGpus: Float64Array,
  demand: Float64Array,
): number {
  demand.fill(0);
  let value = 0;
  const { start, cost } = cols;
  for (let r = 0; r < rowCount; r++) {
    let best = 0;
    let pick = -1;
    for (let k = start[r]!, end = start[r + 1]!; k < end; k++) {
      const reduced = cost[k]! + price[colGroup[k]!]! * colGpus[k]!;
      if (reduced < best) {
        best = reduced;
        pick = k;
      }
    }
    value += best;
    if (pick >= 0) demand[colGroup[pick]!]! += colGpus[pick]!;
  }
  return value;
}

/** Each row's best reduced cost at `price` (0 where none is negative). */
function bestReduced(
  cols: Columns,
  rowCount: number,
  price: Float64Array,
  colGroup: Int32Array,
  colGpus: Float64Array,
): Float64Array {
  const best = new Float64Array(rowCount);
  for (let r = 0; r < rowCount; r++) {
    let b = 0;
    for (let k = cols.start[r]!, end = cols.start[r + 1]!; k < end; k++)
      b = Math.min(b, cols.cost[k]! + price[colGroup[k]!]! * colGpus[k]!);
    best[r] = b;
  }
  return best;
}

/** What a greedy placement reads and changes: the columns, each configuration's group and GPUs, the prices, the room left and the picks. */
interface Use {
  cols: Columns;
  group: Int32Array;
  gpus: Float64Array;
  price: Float64Array;
  room: Float64Array;
  picks: Int32Array;
}

/**
 * Row `r` takes its cheapest configuration that fits (at the prices where `priced`); returns its
 * cost (0 where none fits or none saves anything).
 */
function take(u: Use, r: number, priced: boolean): number {
  const { cols, group, gpus, price, room } = u;
  let pick = -1;
  let pickCost = 0;
  let raw = 0;
  for (let k = cols.start[r]!; k < cols.start[r + 1]!; k++) {
    const c = cols.config[k]!;
    if (gpus[c]! > room[group[c]!]!) continue;
    const x = cols.cost[k]! + (priced ? price[group[c]!]! * gpus[c]! : 0);
    if (x < pickCost) {
      pickCost = x;
      pick = c;
      raw = cols.cost[k]!;
    }
  }
  if (pick < 0) return 0;
  room[group[pick]!]! -= gpus[pick]!;
  u.picks[r] = pick;
  return raw;
}

/**
 * Columns by saving per GPU (most first), each taken where its row has none yet and its group
 * has room; then one pass upgrading each row to a cheaper column that fits. Returns config picks.
 */
function byEfficiency(
  cols: Columns,
  colGroup: Int32Array,
  colGpus: Float64Array,
  cap: readonly number[],
  rowCount: number,
): { picks: Int32Array; cost: number } {
  const room = [...cap];
  const rowOf = new Int32Array(cols.cost.length);
  for (let r = 0; r < rowCount; r++) for (let k = cols.start[r]!; k < cols.start[r + 1]!; k++) rowOf[k] = r;
  // Descending saving per GPU, ties in column order.
  const perGpu = new Float64Array(cols.cost.length);
  for (let k = 0; k < perGpu.length; k++) perGpu[k] = cols.cost[k]! / colGpus[k]!;
  const order = sortedIndices(perGpu);
  const taken = new Int32Array(rowCount).fill(-1);
  for (const k of order) {
    const r = rowOf[k]!;
    if (taken[r] !== -1 || colGpus[k]! > room[colGroup[k]!]!) continue;
    taken[r] = k;
    room[colGroup[k]!]! -= colGpus[k]!;
  }
  for (let r = 0; r < rowCount; r++) {
    const have = taken[r]!;
    if (have < 0) continue;
    let best = have;
    for (let k = cols.start[r]!; k < cols.start[r + 1]!; k++) {
      const extra = colGpus[k]! - (colGroup[k] === colGroup[have] ? colGpus[have]! : 0);
      if (cols.cost[k]! < cols.cost[best]! && extra <= room[colGroup[k]!]!) best = k;
    }
    if (best !== have) {
      room[colGroup[have]!]! += colGpus[have]!;
      room[colGroup[best]!]! -= colGpus[best]!;
      taken[r] = best;
    }
  }
  const picks = new Int32Array(rowCount).fill(-1);
  let cost = 0;
  for (let r = 0; r < rowCount; r++)
    if (taken[r]! >= 0) {
      picks[r] = cols.config[taken[r]!]!;
      cost += cols.cost[taken[r]!]!;
    }
  return { picks, cost };
}
