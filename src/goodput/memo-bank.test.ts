import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MEMO_FORMAT, MemoBank, memoJson, parsedOrUndefined } from './memo-bank.js';
import { ModelMemo, modelKey } from './model-memo.js';
import { CIFAR_PERF, limitsFixture } from './testing/perf-fixture.js';
import type { GoodputModel } from './types.js';

const model = (alpha_c: number, extra: Partial<GoodputModel> = {}): GoodputModel => ({
  perf: { ...CIFAR_PERF, alpha_c },
  grad: { sqr: 0.05, var: 2 },
  limits: limitsFixture({ max_local_bsz: 1024 }),
  ...extra,
});

const corrected = model(0.03, {
  correction: {
    compute: [{ local_bsz: 64, factor: 1.25 }],
    shapes: [{ num_nodes: 2, num_replicas: 8, by_batch: [{ local_bsz: 32, factor: 0.9 }] }],
  },
});
/** A kind's fingerprint: the code's numbers for fixed models (here made up). */
const print = () => [1, NaN, 2];

const odd = model(-0, { grad: { sqr: NaN, var: 1e-300 }, limits: { ...limitsFixture({}), accumulation: true } });

describe('memo bank: memos saved and seeded across a restart', () => {
  it("saves each memo's entries under the model's modelKey, its variant and its numbers (non-finite as null)", () => {
    const bank = new MemoBank();
    const memo = new ModelMemo<number[]>();
    memo.keepIn(bank, 'k', (v) => v, print);
    memo.get(model(0.02), 'v1', () => [1, NaN, 3]);
    memo.get(corrected, '//~', () => [4]);
    memo.get(odd, 'v1', () => [Infinity]);
    const saved = bank.save();
    assert.equal(saved.format, MEMO_FORMAT);
    assert.deepEqual(saved.fingerprints, { k: [1, null, 2] });
    assert.deepEqual(
      saved.kinds['k']!.map(([key, variant, numbers]) => [key, variant, numbers]).sort(),
      [
        [modelKey(model(0.02)), 'v1', [1, null, 3]],
        [modelKey(corrected), '//~', [4]],
        [modelKey(odd), 'v1', [null]],
      ].sort(),
    );
  });

  it('gives a restored seed once, to an equal model of the same kind and variant; through JSON null is NaN again', () => {
    const first = new MemoBank();
    const memo = new ModelMemo<number[]>();
    memo.keepIn(first, 'k', (v) => v, print);
    memo.get(corrected, 'v', () => [1, NaN]);
    const bank = new MemoBank();
    assert.equal(bank.restore(parsedOrUndefined(JSON.stringify(first.save()))), 1);
    const later = new ModelMemo<number[]>();
    later.keepIn(bank, 'k', (v) => v, print);
    assert.equal(later.seed(corrected, 'other'), undefined, 'another variant');
    assert.equal(bank.take('other-kind', corrected, 'v'), undefined, 'another kind');
    assert.equal(later.seed(model(0.03), 'v'), undefined, 'the same numbers without the correction');
    const copy = structuredClone(corrected); // another object, the same content
    assert.deepEqual(later.seed(copy, 'v'), [1, NaN]);
    assert.equal(bank.seeds_left, 0);
    assert.equal(later.seed(copy, 'v'), undefined, 'once');
  });

  it("drops at a save the seeds a kind's memos asked around but never took (models gone since the restart)", () => {
    const bank = new MemoBank();
    const gone = model(0.7);
    bank.restore({
      format: MEMO_FORMAT,
      kinds: {
        k: [
          [modelKey(model(0.5)), 'v', [7]],
          [modelKey(gone), 'v', [9]],
        ],
      },
      fingerprints: { k: [1, null, 2] },
    });
    const memo = new ModelMemo<number[]>();
    memo.keepIn(bank, 'k', (v) => v, print);
    memo.get(model(0.5), 'v', (seed) => seed ?? [0]); // get makes it from the seed
    assert.equal(bank.seeds_left, 1);
    assert.deepEqual(
      bank.save().kinds['k'],
      [[modelKey(model(0.5)), 'v', [7]]],
      "the memo's entry, not the unused seed",
    );
    assert.equal(bank.seeds_left, 0);
  });

  it('saves the seeds of a kind no memo asked yet with the memos (a restart before any round keeps them)', () => {
    const bank = new MemoBank();
    bank.restore({
      format: MEMO_FORMAT,
      kinds: { k: [[modelKey(model(0.5)), 'v', [7]]] },
      fingerprints: { k: [1, null, 2] },
    });
    const memo = new ModelMemo<number[]>();
    memo.keepIn(bank, 'k', (v) => v, print);
    memo.put(model(0.6), 'v', [8]); // put asks the bank nothing (get would ask it for a seed)
    assert.deepEqual(
      bank
        .save()
        .kinds['k']!.map((e) => e[2])
        .sort(),
      [[7], [8]],
    );
  });

  it('restores nothing from what is not a snapshot of this format (a cache: computed again)', () => {
    const bank = new MemoBank();
    const good = { format: MEMO_FORMAT, kinds: { k: [['key', 'v', [1, null]]] }, fingerprints: { k: [1] } };
    assert.equal(bank.restore(good), 1);
    for (const bad of [
      undefined,
      parsedOrUndefined('{not json'),
      { ...good, format: 99 },
      { ...good, kinds: { k: [['key', 'v', ['1']]] } },
      { ...good, kinds: { k: [['key', 'a\nb', [1]]] } },
      { ...good, kinds: { k: [['key', 'v']] } },
      { ...good, kinds: null },
      { format: MEMO_FORMAT, kinds: good.kinds },
      { ...good, fingerprints: { k: ['1'] } },
    ])
      assert.equal(bank.restore(bad), 0, JSON.stringify(bad));
    assert.equal(bank.seeds_left, 0, 'a bad snapshot drops the seeds held before');
  });

  it('memoJson: undefined while no memo holds anything', () => {
    const bank = new MemoBank();
    const memo = new ModelMemo<number[]>();
    memo.keepIn(bank, 'k', (v) => v, print);
    assert.equal(memoJson(bank), undefined);
    memo.get(model(0.1), 'v', () => [1]);
    assert.equal(JSON.parse(memoJson(bank)!).kinds.k.length, 1);
  });

  it("drops a kind's seeds saved by code with another fingerprint (an upgrade that computes other values), keeps the others", () => {
    const saved = {
      format: MEMO_FORMAT,
      kinds: { a: [[modelKey(model(0.5)), 'v', [7]]], b: [[modelKey(model(0.5)), 'v', [8]]], c: [['x', 'v', [9]]] },
      fingerprints: { a: [1, null, 2], b: [1, 2, 3], c: [5] },
    };
    const bank = new MemoBank();
    assert.equal(bank.restore(saved), 3);
    const a = new ModelMemo<number[]>();
    a.keepIn(bank, 'a', (v) => v, print);
    const b = new ModelMemo<number[]>();
    b.keepIn(bank, 'b', (v) => v, print);
    assert.deepEqual(a.seed(model(0.5), 'v'), [7], 'same fingerprint');
    assert.equal(b.seed(model(0.5), 'v'), undefined, 'another fingerprint: dropped');
    assert.equal(bank.seeds_left, 1, "kind c's seed, no memo of its kind here, is kept as it came");
    const again = bank.save();
    assert.deepEqual(again.kinds['c'], [['x', 'v', [9]]]);
    assert.deepEqual(again.fingerprints, { c: [5], a: [1, null, 2], b: [1, null, 2] });
  });
});
