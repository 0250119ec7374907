import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Random } from '../../core/random.js';
import type { AssignmentRow, ConfigUse } from './assignment.js';
import { priceAssignment } from './price-assignment.js';

/** Best cost by enumeration (tiny instances only). */
function bruteForce(
  rows: readonly AssignmentRow[],
  configs: readonly ConfigUse[],
  capacity: readonly number[],
): number {
  let best = Infinity;
  const walk = (r: number, left: number[], cost: number): void => {
    if (r === rows.length) {
      best = Math.min(best, cost);
      return;
    }
    walk(r + 1, left, cost);
    for (const [c, x] of rows[r]!.costs) {
      const use = configs[c]!;
      if (x >= 0 || use.gpus > left[use.group]!) continue;
      left[use.group]! -= use.gpus;
      walk(r + 1, left, cost + x);
      left[use.group]! += use.gpus;
    }
  };
  walk(0, [...capacity], 0);
  return best;
}

const configs: ConfigUse[] = [
  { group: 0, gpus: 1 },
  { group: 0, gpus: 2 },
  { group: 0, gpus: 4 },
  { group: 1, gpus: 1 },
  { group: 1, gpus: 4 },
];

function randomRows(random: Random, count: number): AssignmentRow[] {
  return Array.from({ length: count }, (_, i) => {
    const costs = new Map<number, number>();
    let cost = 0;
    for (let c = 0; c < configs.length; c++) {
      if (c === 3) cost = 0;
      cost -= random.next();
      if (random.next() < 0.8) costs.set(c, cost);
    }
    return { id: `j${i}`, costs };
  });
}

describe('priceAssignment', () => {
  it('fits the capacity, takes one configuration per job, and brackets the optimum', () => {
    const random = new Random(11);
    for (let trial = 0; trial < 30; trial++) {
      const rows = randomRows(random, 6);
      const capacity = [1 + Math.floor(random.next() * 6), 1 + Math.floor(random.next() * 5)];
      const { chosen, objective, bound } = priceAssignment(rows, configs, capacity);
      const used = [0, 0];
      let cost = 0;
      for (const r of rows) {
        const c = chosen.get(r.id);
        if (c === undefined) continue;
        used[configs[c]!.group]! += configs[c]!.gpus;
        cost += r.costs.get(c)!;
      }
      assert.ok(used[0]! <= capacity[0]! && used[1]! <= capacity[1]!, `trial ${trial}: ${used} > ${capacity}`);
      assert.ok(Math.abs(cost - objective) < 1e-9);
      const best = bruteForce(rows, configs, capacity);
      assert.ok(bound <= best + 1e-9, `trial ${trial}: bound ${bound} above the optimum ${best}`);
      assert.ok(objective >= best - 1e-9);
    }
  });

  it('is close to the optimum when there are many jobs', () => {
    const random = new Random(5);
    const rows = randomRows(random, 2000);
    const { objective, bound } = priceAssignment(rows, configs, [1500, 800]);
    assert.ok((objective - bound) / Math.abs(bound) < 0.02, `objective ${objective}, bound ${bound}`);
  });

  it("from last round's prices (a warm start, fewer dual evaluations) it brackets the optimum as closely", () => {
    const random = new Random(5);
    const rows = randomRows(random, 2000);
    const cold = priceAssignment(rows, configs, [1500, 800]);
    // The next round: a tenth of the jobs changed.
    const next = rows.map((r, i) => (i % 10 === 0 ? randomRows(random, 1).map((x) => ({ ...x, id: r.id }))[0]! : r));
    const best = priceAssignment(next, configs, [1500, 800]);
    const warm = priceAssignment(next, configs, [1500, 800], cold.prices);
    assert.ok(warm.bound <= best.objective + 1e-9, 'a bound at any prices is below every solution');
    assert.ok((warm.objective - warm.bound) / Math.abs(warm.bound) < 0.02, `${warm.objective} vs ${warm.bound}`);
    assert.ok(Math.abs(warm.objective - best.objective) / Math.abs(best.objective) < 0.005);
    // Small programs too: the bound stays below the optimum whatever the start.
    for (let trial = 0; trial < 20; trial++) {
      const small = randomRows(random, 6);
      const start = Float64Array.from([random.next() * 3, random.next() * 3]);
      const { bound } = priceAssignment(small, configs, [3, 2], start);
      assert.ok(bound <= bruteForce(small, configs, [3, 2]) + 1e-9, `trial ${trial}`);
    }
  });

  it('where the prices leave the placement far from the bound, places by saving per GPU', () => {
    // Placed at the prices this costs -2 against a bound of -4 (the 4-GPU columns, -2 per GPU,
    // set the price; they do not fit). By saving per GPU, b and d take one GPU each: -3, the optimum.
    const rows: AssignmentRow[] = [
      {
        id: 'a',
        costs: new Map([
          [0, -1],
          [1, -2],
        ]),
      },
      {
        id: 'b',
        costs: new Map([
          [0, -1.5],
          [2, -8],
        ]),
      },
      { id: 'c', costs: new Map([[3, -1]]) },
      {
        id: 'd',
        costs: new Map([
          [0, -1.5],
          [1, -1],
          [2, -8],
        ]),
      },
      {
        id: 'e',
        costs: new Map([
          [2, -2],
          [4, -2],
        ]),
      },
    ];
    const { objective, bound } = priceAssignment(rows, configs, [2, 0]);
    assert.equal(bruteForce(rows, configs, [2, 0]), -3);
    assert.equal(objective, -3);
    assert.ok(bound <= -3);
  });

  it('keeps a forced configuration', () => {
    const rows: AssignmentRow[] = [
      { id: 'a', costs: new Map([[0, -1]]), forced: 0 },
      { id: 'b', costs: new Map([[0, -5]]) },
    ];
    const { chosen } = priceAssignment(rows, configs, [1, 0]);
    assert.equal(chosen.get('a'), 0);
    assert.equal(chosen.has('b'), false);
  });
});
