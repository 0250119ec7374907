import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PolicyJob } from '../core/cluster.js';
import { fitPerfParams } from '../goodput/fit.js';
import type { KeyProfile } from '../goodput/key-profile.js';
import type { ProfilePoint } from '../goodput/types.js';
import { fitJob } from '../model/job-fit.js';
import { GoodputPolicy } from '../policy/goodput/index.js';
import type { Policy } from '../policy/policy.js';
import { findPolicy } from '../policy/registry.js';
import { getApplication, type TraceApplication } from './application.js';
import { SimProfileStore } from './profile-store.js';
import { simulate } from './simulator.js';
import { defaultTracesDir, type Workload, type WorkloadJob } from './workload.js';

const cifar10 = getApplication('cifar10', defaultTracesDir())!;

function workloadJob(name: string, submit_s: number, application: TraceApplication = cifar10): WorkloadJob {
  return { name, submit_s, application, num_replicas: 1, batch_size: 128, line: 0 };
}

/** The application with every step `factor` times slower: another model under the same key. */
function slower(app: TraceApplication, factor: number): TraceApplication {
  const copy = Object.create(app) as TraceApplication;
  copy.throughput = (placement, local_bsz) => {
    const [step, sync] = app.throughput(placement, local_bsz);
    return [step * factor, sync * factor];
  };
  return copy;
}

/** Runs `policy` on `jobs`, recording each job's PolicyJob per round. */
function record(jobs: WorkloadJob[], policyName: string, policy: Policy): Map<string, PolicyJob[]> {
  const seen = new Map<string, PolicyJob[]>();
  const workload: Workload = { file: 'test', jobs };
  simulate(workload, policyName, {
    name: policy.name,
    ...(policy.uses_profiles !== undefined ? { uses_profiles: policy.uses_profiles } : {}),
    decide: (s) => {
      for (const j of s.jobs) seen.set(j.id, [...(seen.get(j.id) ?? []), { ...j, model: j.model }]);
      return policy.decide(s);
    },
  });
  return seen;
}

// Two cifar10 jobs, the second submitted while the first runs (it has measured several sizes).
const twoJobs = (second: TraceApplication = cifar10): WorkloadJob[] => [
  workloadJob('first', 0),
  workloadJob('second', 300, second),
];

describe('simulator profile store', () => {
  it("starts a second job of an application from the first one's profile", () => {
    const seen = record(twoJobs(), 'goodput', new GoodputPolicy());
    const first = seen.get('first')![0]!;
    assert.equal(first.model, undefined, 'the first job of a key starts from nothing');
    assert.equal(first.model_from_profile, false);
    const second = seen.get('second')![0]!;
    assert.equal(second.profile_key, 'cifar10');
    assert.equal(second.model_from_profile, true);
    assert.ok(second.model !== undefined, 'a model before its own first measurement');
    assert.ok(second.max_profiled_replicas > 1, `profile sizes count as measured, got ${second.max_profiled_replicas}`);
    assert.ok(
      seen.get('second')!.every((j) => j.model_from_profile === true),
      'a job of the same model keeps its profile',
    );
    assert.ok((second.model?.correction?.shapes.length ?? 0) > 1, "the key's measured shapes correct the fit");
    const alone = seen.get('first')!.filter((j) => j.model_from_profile === false && j.model !== undefined);
    assert.ok(alone.length > 0, 'the first job is modelled before the second arrives');
    assert.ok(
      alone.every((j) => (j.model!.correction?.shapes.length ?? 0) > 0),
      'a job with no profile of other jobs is corrected by its own measurements',
    );
  });

  it('drops the profile for a job whose measurements disagree', () => {
    const seen = record(twoJobs(slower(cifar10, 2)), 'goodput', new GoodputPolicy());
    const rounds = seen.get('second')!;
    assert.equal(rounds[0]!.model_from_profile, true, 'it starts from the profile');
    const dropped = rounds.findIndex((j) => j.model_from_profile === false);
    assert.ok(dropped > 0 && dropped <= 2, `dropped at its first measurement, round ${dropped}`);
    assert.ok(
      rounds.slice(dropped).every((j) => j.model_from_profile === false),
      'for good',
    );
  });

  it('is not used by policies that do not ask for profiles (pollux, goodput with profiles=false)', () => {
    for (const [name, policy] of [
      ['pollux', findPolicy('pollux')!.create({ seed: 1 })],
      ['goodput', new GoodputPolicy({ profiles: false })],
    ] as const) {
      const seen = record(twoJobs(), name, policy);
      const second = seen.get('second')![0]!;
      assert.equal(second.profile_key, undefined, name);
      assert.equal(second.model, undefined, `${name}: the second job starts from nothing`);
      assert.equal(second.max_profiled_replicas, 0, name);
    }
  });

  it('runs are deterministic with profiles', () => {
    const jobs = [0, 1, 2, 3].map((i) => workloadJob(`c${i}`, i * 200));
    const run = () => simulate({ file: 'test', jobs }, 'goodput', new GoodputPolicy()).jobs.map((j) => j.jct_s);
    assert.deepEqual(run(), run());
  });
});

describe('SimProfileStore', () => {
  it('merges reports per key and refits only on a new placement shape', () => {
    const store = new SimProfileStore(fitPerfParams);
    const point = (num_nodes: number, num_replicas: number, local_bsz: number) => ({
      num_nodes,
      num_replicas,
      local_bsz,
      accum_step_time_s: (0.01 * local_bsz) / 32,
      optim_step_time_s: (0.012 * local_bsz) / 32 + 0.001 * num_replicas,
    });
    assert.equal(store.profileFit('a'), undefined);
    store.report('a', [point(1, 1, 32)], [{ progress: 0, sqr: 1, var: 2 }], true);
    const fit1 = store.profileFit('a');
    store.report('a', [point(1, 1, 64)], [], false);
    assert.equal(store.profileFit('a'), fit1, 'a new local batch at a known shape does not refit');
    store.report('a', [point(1, 4, 32)], [], true);
    assert.notEqual(store.profileFit('a'), fit1);
    assert.deepEqual(
      [store.get('a')!.jobs, store.get('a')!.points.length, store.modelVersion('a'), store.size],
      [2, 3, 2, 1],
    );
  });

  /** A job's fit by the one rule (model/job-fit.ts) with the store's network model. */
  const fitWith = (
    store: SimProfileStore,
    own: readonly ProfilePoint[],
    model_parameters?: number,
    profile?: KeyProfile,
  ) =>
    fitJob({
      own,
      ...(profile ? { profile } : {}),
      ...(store.usesNetworkModel ? { network: () => store.networkParams() } : {}),
      ...(model_parameters !== undefined ? { model_parameters } : {}),
      corrected: false,
      fit: fitPerfParams,
    })!.perf;

  it('with the network model, a job measured on one node borrows cross-node terms from other keys', () => {
    const bert = getApplication('bert', defaultTracesDir())!;
    const point = (app: TraceApplication, placement: number[], local_bsz: number) => {
      const [step, sync] = app.throughput(placement, local_bsz);
      const num_replicas = placement.reduce((a, b) => a + b, 0);
      return {
        num_nodes: placement.length,
        num_replicas,
        local_bsz,
        accum_step_time_s: step - sync,
        optim_step_time_s: step,
      };
    };
    const oneNode = [
      point(cifar10, [1], 64),
      point(cifar10, [2], 64),
      point(cifar10, [4], 64),
      point(cifar10, [4], 128),
    ];
    const bertPoints = [
      point(bert, [1], 8),
      point(bert, [4], 8),
      point(bert, [4, 4], 8),
      point(bert, [4, 4, 4, 4], 8),
      point(bert, [4, 4, 4, 4], 12),
    ];
    for (const network of [false, true]) {
      const store = new SimProfileStore(fitPerfParams, network);
      store.report('bert', bertPoints, [], true);
      const own = fitWith(store, oneNode);
      const plain = fitPerfParams(oneNode);
      if (network) assert.notDeepEqual(own, plain, 'cross-node terms from the cluster');
      else assert.deepEqual(own, plain);
      store.report('cifar10', oneNode, [], true);
      assert.deepEqual(
        fitWith(store, oneNode, undefined, store.get('cifar10')),
        plain,
        'a job with a profile keeps the plain fit',
      );
    }
    // Keys whose jobs reported their parameter count give a job that reports its own the
    // two-term map (network-model.ts ParameterMap), which a job without one does not use.
    const imagenet = getApplication('imagenet', defaultTracesDir())!;
    const imagenetPoints = [
      point(imagenet, [1], 64),
      point(imagenet, [4], 64),
      point(imagenet, [4], 128),
      point(imagenet, [4, 4, 4, 4], 64),
      point(imagenet, [4, 4, 4, 4], 100),
    ];
    const store = new SimProfileStore(fitPerfParams, true);
    store.report('bert', bertPoints, [], true, bert.model_parameters);
    store.report('imagenet', imagenetPoints, [], true, imagenet.model_parameters);
    assert.equal(store.get('bert')!.model_parameters, 109.5e6, "the reported count is kept in the key's profile");
    const withCount = fitWith(store, oneNode, cifar10.model_parameters);
    const withoutCount = fitWith(store, oneNode);
    assert.notEqual(withCount.alpha_n, withoutCount.alpha_n);
  });
});
