import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSnapshot, NodeInfo, PolicyJob } from '../../core/cluster.js';
import { MemoBank, MEMO_FORMAT, parsedOrUndefined } from '../../goodput/memo-bank.js';
import { ModelMemo, modelKey } from '../../goodput/model-memo.js';
import type { GoodputModel } from '../../goodput/types.js';
import { buildJobTypes } from '../../model/job-types.js';
import type { Policy } from '../policy.js';
import { createPolicy } from '../registry.js';
import { job, limits, perf, snapshot } from './test-jobs.js';
import { modelSpeedup, SPEEDUP_MEMO_KIND, speedupFingerprint, type ModelSpeedup } from './view-speedup.js';

/** A model of its own per job (as jobs that fitted their measurements have). */
const model = (k: number): GoodputModel => ({
  perf: { ...perf, alpha_c: perf.alpha_c * (1 + k / 7) },
  grad: { sqr: 0.05 * (1 + k / 3), var: 2 },
  limits,
});

function oneType(allocations: ClusterSnapshot['allocations'] = {}, now_s = 3600): ClusterSnapshot {
  const jobs = Array.from({ length: 10 }, (_, k) =>
    job(`j${k}`, { model: model(k), attained_service_gpu_s: 50 * k, max_profiled_replicas: k % 3 }),
  );
  return snapshot(jobs, 6, allocations, now_s);
}

const typedNodes: NodeInfo[] = [
  { index: 0, name: 'a-0', gpus: 4, preemptible: false, gpu_type: 'a' },
  { index: 1, name: 'a-1', gpus: 4, preemptible: false, gpu_type: 'a' },
  { index: 2, name: 'b-0', gpus: 8, preemptible: false, gpu_type: 'b' },
];

function typed(allocations: ClusterSnapshot['allocations'] = {}, now_s = 3600): ClusterSnapshot {
  const jobs: PolicyJob[] = Array.from({ length: 10 }, (_, k) => {
    const own = model(k);
    return job(`j${k}`, {
      model: own,
      attained_service_gpu_s: 50 * k,
      max_replicas: 8,
      max_profiled_replicas: 2,
      per_type: buildJobTypes({
        types: ['a', 'b'],
        own_type: 'a',
        model: (t) => (t === 'a' ? own : undefined),
        limits: () => limits,
        max_profiled: { a: 2, b: 0 },
        remaining_samples: 1e6 * (k + 1),
        restart_s: 30,
        restarting: false,
      }),
    });
  });
  return { now_s, nodes: typedNodes, jobs, allocations };
}

/** Three rounds fed back: the decisions. */
function rounds(policy: Policy, make: (a: ClusterSnapshot['allocations'], now_s: number) => ClusterSnapshot) {
  const out = [];
  let allocations: ClusterSnapshot['allocations'] = {};
  for (let r = 0; r < 3; r++) {
    const d = policy.decide(make(allocations, 3600 + 60 * r));
    out.push(d);
    allocations = d.allocations;
  }
  return out;
}

describe('the goodput policy after a restart with its saved memos', () => {
  for (const [name, make] of [
    ['one type', oneType],
    ['several types', typed],
  ] as const) {
    it(`${name}: decides as before the restart, from the seeds (all used)`, async () => {
      const before = new MemoBank();
      const expected = rounds(await createPolicy('goodput', { seed: 0, memo_bank: before }), make);
      const text = JSON.stringify(before.save());
      const bank = new MemoBank();
      const seeds = bank.restore(parsedOrUndefined(text));
      assert.ok(seeds >= 10, `a seed per job's model (${seeds})`);
      const restarted = await createPolicy('goodput', { seed: 0, memo_bank: bank });
      assert.deepEqual(rounds(restarted, make), expected);
      assert.equal(bank.seeds_left, 0, 'every seed was taken');
    });
  }

  it("a speedup seed is read, not searched again: its one-GPU goodput and table are the model's", () => {
    const m = model(1);
    const j = job('j', { model: m });
    const bank = new MemoBank();
    // Made-up numbers: a search would never give them.
    bank.restore({
      format: MEMO_FORMAT,
      kinds: { [SPEEDUP_MEMO_KIND]: [[modelKey(m), '/', [123, 4, null, 1, 1.5]]] },
      fingerprints: { [SPEEDUP_MEMO_KIND]: speedupFingerprint() },
    });
    const memo = new ModelMemo<ModelSpeedup>();
    memo.keepIn(bank, SPEEDUP_MEMO_KIND, () => undefined, speedupFingerprint);
    const s = modelSpeedup(m, j, memo, false);
    assert.equal(s.one_gpu, 123);
    assert.equal(s.by_gpus, 4);
    assert.deepEqual(s.by_replicas.slice(0, 3), [NaN, 1, 1.5]);
    assert.equal(modelSpeedup(m, j, memo, false), s, 'kept in the memo');
  });

  it('the fingerprints are finite numbers of the code, the same each time, and tell the reference models apart', async () => {
    const { goodputsFingerprint } = await import('../sia/goodput-memo.js');
    for (const print of [speedupFingerprint, goodputsFingerprint]) {
      const a = print();
      assert.ok(a.length >= 24 && a.every((x) => Number.isFinite(x)), JSON.stringify(a));
      assert.deepEqual(print(), a);
      const half = a.length / 2;
      assert.notDeepEqual(a.slice(0, half), a.slice(half), 'the corrected reference model gives other numbers');
    }
  });
});
