import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelMemo, modelKey } from './model-memo.js';
import { CIFAR_PERF, limitsFixture } from './testing/perf-fixture.js';
import type { GoodputModel } from './types.js';

const model: GoodputModel = {
  perf: CIFAR_PERF,
  grad: { sqr: 0.002, var: 0.05 },
  limits: limitsFixture({ max_local_bsz: 1024 }),
};

describe('ModelMemo', () => {
  it('equal models share one value; a model differing in any field read by a prediction does not', () => {
    const memo = new ModelMemo<number>();
    let made = 0;
    const make = () => ++made;
    assert.equal(memo.get(model, 'a', make), 1);
    // A copy (another object, same content), as every job of a profile key holds.
    assert.equal(memo.get({ ...model, perf: { ...model.perf } }, 'a', make), 1);
    assert.equal(memo.get(model, 'b', make), 2, 'another variant is another value');
    assert.equal(memo.get({ ...model, perf: { ...model.perf, gamma: 1.17 } }, 'a', make), 3);
    assert.equal(memo.get({ ...model, grad: { sqr: 0.002, var: 0.06 } }, 'a', make), 4);
    assert.equal(memo.get({ ...model, limits: { ...model.limits, accumulation: false } }, 'a', make), 5);
    const corrected: GoodputModel = {
      ...model,
      correction: { compute: [{ local_bsz: 64, factor: 1.1 }], shapes: [] },
    };
    assert.equal(memo.get(corrected, 'a', make), 6);
    const corrected2: GoodputModel = {
      ...model,
      correction: { compute: [{ local_bsz: 64, factor: 1.2 }], shapes: [] },
    };
    assert.equal(memo.get(corrected2, 'a', make), 7);
    assert.notEqual(modelKey(corrected), modelKey(corrected2));
    assert.equal(modelKey(corrected), modelKey(structuredClone(corrected)));
    // The same numbers laid out differently (a compute factor vs a shape) are different models.
    const asShape: GoodputModel = {
      ...model,
      correction: { compute: [], shapes: [{ num_nodes: 64, num_replicas: 1.1, by_batch: [] }] },
    };
    assert.equal(memo.get(asShape, 'a', make), 8);
    // A difference in the last bit of one number is a different model.
    const nudged = { ...model, perf: { ...model.perf, gamma: model.perf.gamma * (1 + Number.EPSILON) } };
    assert.notEqual(nudged.perf.gamma, model.perf.gamma);
    assert.equal(memo.get(nudged, 'a', make), 9);
  });

  it('tells contents apart as modelKey does: -0 is 0, NaN is NaN, a collision of sums is two contents', () => {
    const memo = new ModelMemo<number>();
    let made = 0;
    const make = () => ++made;
    const at = (perf: Partial<GoodputModel['perf']>): GoodputModel => ({ ...model, perf: { ...model.perf, ...perf } });
    assert.equal(memo.get(at({ alpha_r: 0 }), 'a', make), 1);
    assert.equal(memo.get(at({ alpha_r: -0 }), 'a', make), 1, 'modelKey prints -0 as 0');
    assert.equal(modelKey(at({ alpha_r: 0 })), modelKey(at({ alpha_r: -0 })));
    assert.equal(memo.get(at({ gamma: NaN }), 'a', make), 2);
    assert.equal(memo.get(at({ gamma: NaN }), 'a', make), 2, 'NaN prints as NaN');
    // The same key (alpha_c + grad.sqr) for both: the numbers themselves decide.
    const base = at({ alpha_c: 0.5, beta_c: 0.25 });
    const other = at({ alpha_c: 0.5, beta_c: 0.125 });
    assert.equal(memo.get(base, 'a', make), 3);
    assert.equal(memo.get(other, 'a', make), 4);
    assert.notEqual(modelKey(base), modelKey(other));
    assert.equal(memo.get(structuredClone(base), 'a', make), 3);
    assert.equal(memo.size, 4);
  });

  it('drops the models a round did not use once it holds more than its minimum size', () => {
    const memo = new ModelMemo<number>(2);
    const variant = (gamma: number): GoodputModel => ({ ...model, perf: { ...model.perf, gamma } });
    for (const g of [1, 2, 3, 4]) memo.get(variant(g), 'a', () => g);
    memo.nextRound();
    assert.equal(memo.size, 4, 'all four were used in the round');
    memo.get(variant(1), 'a', () => -1);
    memo.nextRound();
    assert.equal(memo.size, 1, 'the three unused are dropped');
    assert.equal(
      memo.get(variant(1), 'a', () => -1),
      1,
    );
    assert.equal(
      memo.get(variant(2), 'a', () => -2),
      -2,
      'a dropped model is made anew',
    );
  });

  it('finds the models it keeps after their numbers outgrow its first buffer and are compacted', () => {
    const memo = new ModelMemo<number>(10);
    const variant = (gamma: number): GoodputModel => ({ ...model, perf: { ...model.perf, gamma } });
    // 600 contents: past the 256 heads the memo starts with.
    for (let g = 1; g <= 600; g++) memo.get(variant(g), 'a', () => g);
    memo.nextRound();
    for (let g = 3; g <= 600; g += 3) memo.get(variant(g), 'a', () => -g);
    memo.nextRound();
    assert.equal(memo.size, 200, 'the 400 not used in the second round are dropped');
    for (let g = 3; g <= 600; g += 3)
      assert.equal(
        memo.get(variant(g), 'a', () => -g),
        g,
      );
    assert.equal(
      memo.get(variant(1), 'a', () => -1),
      -1,
      'a dropped model is made anew',
    );
    assert.equal(memo.size, 201);
  });
});
