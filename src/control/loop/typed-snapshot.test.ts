import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { throughput } from '../../goodput/throughput.js';
import { GoodputHetero } from '../../policy/sia/goodput-hetero.js';
import { loadHighsSolver } from '../../policy/solver.js';
import type { StoredKeyProfile } from '../../store/types.js';
import { OpenNodes } from '../../policy/typed.js';
import { toPolicyJob } from './snapshot.js';
import { jobTypes, UNKNOWN_TYPE_DISCOUNT } from './typed-snapshot.js';
import { job as policyJobFixture } from '../../policy/goodput/test-jobs.js';
import { A100_PROFILE, onT4Fixture, TYPED_LIMITS, typedPerf } from './testing/typed-fixture.js';

const limits = TYPED_LIMITS;
const perf = typedPerf;
const onT4 = onT4Fixture;
const a100Profile = A100_PROFILE;
const nodes = [
  { index: 0, name: 'gp1', gpus: 4, preemptible: false, gpu_type: 'a100' },
  { index: 1, name: 'gp2', gpus: 4, preemptible: false, gpu_type: 't4' },
];

describe('per-type facts of stored jobs', () => {
  it("a job's model is its own fit on its type and its key's profile on another; one-GPU rates follow them", () => {
    const j = jobTypes(
      { job: onT4(), own_type: 't4', profiles: new Map([['a100', a100Profile]]), own_profile: undefined },
      ['a100', 't4'],
    );
    assert.deepEqual(j.model('t4')?.perf, perf(8));
    assert.deepEqual(j.model('a100')?.perf, perf(1));
    assert.ok(j.one_gpu_samples_per_s.a100! > 5 * j.one_gpu_samples_per_s.t4!, JSON.stringify(j.one_gpu_samples_per_s));
    assert.deepEqual(j.max_profiled, { a100: 1, t4: 1 });
    assert.equal(toPolicyJob(onT4(), 60_000, undefined, j).profile_key, 'k');
    assert.equal(j.restarting, false);
  });

  it('a type nothing is known of gets a little less than the known rate (no reason to move there); nothing known anywhere: 1 each', () => {
    const j = jobTypes({ job: onT4(), own_type: 't4', profiles: new Map(), own_profile: undefined }, ['a100', 't4']);
    assert.equal(j.model('a100'), undefined);
    assert.equal(j.one_gpu_samples_per_s.t4, throughput(perf(8), 1, 1, 64, 0));
    assert.equal(j.one_gpu_samples_per_s.a100, j.one_gpu_samples_per_s.t4! * UNKNOWN_TYPE_DISCOUNT);
    const queued = jobTypes(
      {
        job: onT4({ perf: null, allocation: [], devices: [], state: 'queued' }),
        own_type: undefined,
        profiles: new Map(),
        own_profile: undefined,
      },
      ['a100', 't4'],
    );
    assert.deepEqual(queued.one_gpu_samples_per_s, { a100: 1, t4: 1 });
    const started = jobTypes(
      { job: onT4({ perf: null }), own_type: 't4', profiles: new Map(), own_profile: undefined },
      ['a100', 't4'],
    );
    assert.deepEqual(started.one_gpu_samples_per_s, { a100: UNKNOWN_TYPE_DISCOUNT, t4: 1 });
  });

  it('the goodput policy moves the t4 job to a100, where its key measured 8x its speed; without that profile it stays, in its first round and later', async () => {
    const solver = await loadHighsSolver();
    const job = onT4();
    const policyJob = policyJobFixture(job.id, { max_replicas: 1, max_profiled_replicas: 1, limits });
    const snapshot = { now_s: 600, nodes, jobs: [policyJob], allocations: { [job.id]: [1] } };
    const decider = (profiles: Map<string, StoredKeyProfile>) => {
      const d = new OpenNodes(() => new GoodputHetero(solver));
      const per_type = jobTypes({ job, own_type: 't4', profiles, own_profile: undefined }, ['a100', 't4']);
      return () => d.decide({ ...snapshot, jobs: [{ ...policyJob, profile_key: 'k', per_type }] }).allocations;
    };
    assert.deepEqual(decider(new Map([['a100', a100Profile]]))(), { [job.id]: [0] });
    const unknown = decider(new Map());
    assert.deepEqual(unknown(), { [job.id]: [1] }, 'a type nothing is known of is no reason to move');
    assert.deepEqual(unknown(), { [job.id]: [1] });
  });

  it('a running job that may not be stopped is kept where it is (restarting)', () => {
    const j = jobTypes(
      {
        job: onT4({ spec: { ...onT4().spec, preemptible: false } }),
        own_type: 't4',
        profiles: new Map(),
        own_profile: undefined,
      },
      ['a100', 't4'],
    );
    assert.equal(j.restarting, true);
  });
});
