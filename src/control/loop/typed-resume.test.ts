import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterSnapshot } from '../../core/cluster.js';
import { GoodputHetero } from '../../policy/sia/goodput-hetero.js';
import type { Policy } from '../../policy/policy.js';
import { ResumingGoodputHetero } from '../../policy/sia/resuming.js';
import { loadHighsSolver } from '../../policy/solver.js';
import { OpenNodes } from '../../policy/typed.js';
import type { StoredKeyProfile } from '../../store/types.js';
import { jobTypes } from './typed-snapshot.js';
import { job as policyJobFixture } from '../../policy/goodput/test-jobs.js';
import { A100_PROFILE, onT4Fixture, TYPED_LIMITS, typedPerf } from './testing/typed-fixture.js';

const limits = TYPED_LIMITS;
const a100Profile = A100_PROFILE;
const a100 = { preemptible: false, gpu_type: 'a100' };
const t4 = { preemptible: false, gpu_type: 't4' };

/**
 * A job on one t4 GPU (policy node 1) whose own fit there is `slower` times the a100 profile's
 * speed, with `remaining` samples left.
 */
function round(slower: number, remaining: number, nodes: ClusterSnapshot['nodes']) {
  const job = onT4Fixture({ remaining_samples: remaining, perf: typedPerf(slower) });
  const policyJob = policyJobFixture(job.id, { max_replicas: 1, max_profiled_replicas: 1, limits, profile_key: 'k' });
  return (d: OpenNodes, profiles: Map<string, StoredKeyProfile>) => {
    const per_type = jobTypes({ job, own_type: 't4', profiles, own_profile: undefined }, ['a100', 't4']);
    const snapshot: ClusterSnapshot = {
      now_s: 600,
      nodes,
      jobs: [{ ...policyJob, per_type }],
      allocations: { [job.id]: [1] },
    };
    return d.decide(snapshot).allocations;
  };
}

describe('the typed goodput policy across its restarts', () => {
  it('a restarted policy discounts a move as the running one does: a job with little work left stays on t4 for a 1.5x gain', async () => {
    const solver = await loadHighsSolver();
    const two = [
      { index: 0, name: 'gp1', gpus: 4, ...a100 },
      { index: 1, name: 'gp2', gpus: 4, ...t4 },
    ];
    const decide = round(1.5, 3000, two);
    const profiles = new Map([['a100', a100Profile]]);
    // The running policy: it placed the job on t4 last round (a100 then unknown), and keeps it there.
    const running = new OpenNodes(() => new GoodputHetero(solver));
    assert.deepEqual(decide(running, new Map()), { j: [1] });
    assert.deepEqual(decide(running, profiles), { j: [1] }, 'the change discount keeps it');
    // A fresh instance of the plain policy remembers nothing and moves it: what a restart did.
    assert.deepEqual(decide(new OpenNodes(() => new GoodputHetero(solver)), profiles), { j: [0] });
    // The control plane's: at server start, and after a decision it overrode.
    let resuming = new OpenNodes((): Policy => new ResumingGoodputHetero(solver));
    assert.deepEqual(decide(resuming, profiles), { j: [1] }, 'first round after a start');
    resuming = new OpenNodes((): Policy => new ResumingGoodputHetero(solver));
    assert.deepEqual(decide(resuming, profiles), { j: [1] }, 'after a restart');
    assert.deepEqual(decide(resuming, profiles), { j: [1] }, 'and in later rounds');
    // A gain the discount does not refuse still moves it.
    assert.deepEqual(round(8, 3000, two)(new OpenNodes(() => new ResumingGoodputHetero(solver)), profiles), { j: [0] });
  });

  it('when the open nodes change (a third node appears), the job is still discounted against where it runs', async () => {
    const solver = await loadHighsSolver();
    const profiles = new Map([['a100', a100Profile]]);
    const two = [
      { index: 0, name: 'gp1', gpus: 4, ...a100 },
      { index: 1, name: 'gp2', gpus: 4, ...t4 },
    ];
    const three = [...two, { index: 2, name: 'gp3', gpus: 4, ...a100 }];
    const resuming = new OpenNodes(() => new ResumingGoodputHetero(solver));
    assert.deepEqual(round(1.5, 3000, two)(resuming, profiles), { j: [1] });
    assert.deepEqual(
      round(1.5, 3000, three)(resuming, profiles),
      { j: [1] },
      'new configurations, new instance, same discount',
    );
    const plain = new OpenNodes(() => new GoodputHetero(solver));
    assert.deepEqual(round(1.5, 3000, two)(plain, new Map()), { j: [1] });
    assert.deepEqual(
      round(1.5, 3000, three)(plain, profiles),
      { j: [0] },
      'the plain policy restarted by the new node moves it',
    );
  });
});
