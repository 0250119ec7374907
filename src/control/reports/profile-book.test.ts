import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendNode } from '../../backends/backend.js';
import { perfPoint } from '../../goodput/testing/perf-fixture.js';
import type { ProfilePoint } from '../../goodput/types.js';
import { scopedKey } from '../../core/profile-scope.js';
import { jobRecordFixture, trainSpecFixture } from '../../store/job-fixture.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { JobRecord, JobSpec } from '../../store/types.js';
import { deviceType, gpuTypeOf, ProfileBook, progressOf } from './profile-book.js';
import { refitJob } from './refit.js';
import { toPolicyJob } from '../loop/snapshot.js';
import { cpuNodeFixture } from '../testing/control-driver.js';

const point = (num_replicas: number, scale = 1, local_bsz = 32): ProfilePoint =>
  perfPoint({ num_replicas, scale, local_bsz });
const cpuNode = (name: string, usable = 4): BackendNode => cpuNodeFixture(4, name, usable);
const gpuNode: BackendNode = {
  name: 'g',
  address: 'g',
  usable: 2,
  note: '',
  devices: [0, 1].map((index) => ({ index, kind: 'gpu' as const, name: 'NVIDIA H100 80GB HBM3' })),
};
const spec = (profile: string): JobSpec => trainSpecFixture({ profile });

describe('profile identity', () => {
  it('a GPU type is the GPU model; CPU slots are cpu', () => {
    assert.equal(deviceType(gpuNode.devices[0]), 'NVIDIA H100 80GB HBM3');
    assert.equal(deviceType({ index: 0, kind: 'gpu', name: ' ' }), 'gpu');
    assert.equal(deviceType(cpuNode('a').devices[1]), 'cpu');
    assert.equal(deviceType(undefined), 'cpu');
    assert.equal(
      gpuTypeOf({ allocation: [1], devices: [1] }, [cpuNode('a'), gpuNode]),
      'NVIDIA H100 80GB HBM3',
      'where it is placed',
    );
    assert.equal(
      gpuTypeOf({ allocation: [], devices: [] }, [{ ...cpuNode('a'), usable: 0 }, gpuNode]),
      'NVIDIA H100 80GB HBM3',
      'not placed: the first usable node',
    );
    assert.equal(gpuTypeOf({ allocation: [], devices: [] }, []), 'cpu');
  });

  it('progress in hundredths from samples done and left; unknown without remaining_samples', () => {
    assert.equal(progressOf({ samples: 1000, remaining_samples: 3000 }), 0.25);
    assert.equal(progressOf({ samples: 1, remaining_samples: 2 }), 0.33);
    assert.equal(progressOf({ samples: 0, remaining_samples: 0 }), 0);
    assert.equal(progressOf({ samples: 1000, remaining_samples: null }), undefined);
  });
});

describe('ProfileBook', () => {
  // What the report path does with a job's measurements: a refit (refit.ts), saved in one transaction.
  const learn = (o: { store: SqliteStore; book: ProfileBook }, job: JobRecord, own: ProfilePoint[]) =>
    refitJob({ store: o.store, log: () => {}, profiles: o.book }, job, own);
  const open = async () => {
    const store = new SqliteStore(':memory:');
    const lines: string[] = [];
    return {
      store,
      lines,
      book: new ProfileBook(
        store,
        () => [cpuNode('local')],
        (l) => lines.push(l),
      ),
    };
  };
  const job = async (store: SqliteStore, id: string, key: string) => {
    await store.createJob({ id, name: id, user: 'u', spec: spec(key) }, 'u');
    return (await store.getJob(id))!;
  };

  it("merges a job into its key's profile; the next job of the key starts from it at the measured sizes", async () => {
    const { store, book } = await open();
    const first = {
      ...(await job(store, 'a', 'train')),
      grad: { sqr: 1, var: 4 },
      samples: 100,
      remaining_samples: 900,
      limits: jobRecordFixture().limits,
    };
    assert.equal(await learn({ store, book }, first, []), undefined, 'nothing measured, nothing learned');
    const learned = await learn({ store, book }, first, [point(1), point(4)]);
    assert.deepEqual(
      [learned!.jobs, learned!.max_measured_replicas, learned!.grad],
      [1, 4, [{ progress: 0.1, sqr: 1, var: 4 }]],
    );
    assert.ok(learned!.perf, "the profile's model is fitted");
    assert.deepEqual((await store.getKeyProfile(scopedKey('train', 'u'), 'cpu'))!.perf, learned!.perf);
    // The first job itself: its profile is only its own, so no "profile-used".
    assert.equal((await book.forRound([(await store.getJob('a'))!])).size, 0);

    const second = await job(store, 'b', 'train');
    const other = await job(store, 'c', 'bert');
    // What the API shows a job with: the round's rule, and nothing recorded or remembered.
    const looked = await book.lookup([second, other]);
    assert.deepEqual([...looked.keys()], ['b']);
    assert.equal(
      (await store.listEvents('b')).some((e) => e.kind === 'profile-used'),
      false,
      'a lookup records nothing',
    );
    const restarted = new ProfileBook(
      store,
      () => [cpuNode('local')],
      () => {},
    );
    assert.deepEqual([...(await restarted.lookup([second])).keys()], ['b']);
    assert.equal(restarted.latestFor(second), undefined, 'nor does it change what the report path uses');
    const profiles = await book.forRound([second, other]);
    assert.deepEqual(profiles.get('b'), looked.get('b'));
    const ended = { ...(await job(store, 'd', 'train')), state: 'failed' as const };
    assert.equal(
      (await book.lookup([ended])).size,
      0,
      'a job that ended before using the profile is not predicted by it',
    );
    assert.equal(
      (await book.lookup([{ ...(await store.getJob('b'))!, state: 'succeeded' }])).size,
      1,
      'one whose model used it is',
    );
    assert.deepEqual([...profiles.keys()], ['b']);
    const used = (await store.listEvents('b')).find((e) => e.kind === 'profile-used')!;
    assert.match(
      used.reason,
      /model from the profile of 'train' on cpu: 1 earlier job measured it at 1, 4 replica\(s\)/,
    );
    await book.forRound([(await store.getJob('b'))!]);
    assert.equal((await store.listEvents('b')).filter((e) => e.kind === 'profile-used').length, 1, 'recorded once');

    const pj = toPolicyJob((await store.getJob('b'))!, 1000, profiles.get('b'));
    assert.deepEqual([pj.profile_key, pj.model_from_profile, pj.max_profiled_replicas], ['train', true, 4]);
    assert.deepEqual(pj.model!.grad, { sqr: 1, var: 4 }, 'gradient statistics of the profile at the start');
    assert.deepEqual(pj.limits, first.limits, 'limits of the profile until it reports its own');
    const plain = toPolicyJob(other, 1000);
    assert.deepEqual(
      [plain.profile_key, plain.model_from_profile, plain.max_profiled_replicas, plain.model],
      ['bert', false, 0, undefined],
    );

    // The report path sees the same profile without reading the store; the first job does not.
    assert.deepEqual(book.latestFor(second)?.perf, profiles.get('b')!.perf);
    assert.equal(book.latestFor((await store.getJob('a'))!), undefined, 'only its own measurements');
    assert.equal(book.latestFor(other), undefined);

    // Its own measurements agree: it stays on the profile and adds to it.
    const merged = await learn({ store, book }, (await store.getJob('b'))!, [point(4, 1.1)]);
    assert.deepEqual([merged!.jobs, (await store.getJob('b'))!.profile_use], [2, 'used']);
    assert.equal(book.latestFor((await store.getJob('b'))!), merged, 'the newest profile once merged');
    assert.ok(book.latestFor((await store.getJob('a'))!), "the first job now has another job's measurements too");
    await store.close();
  });

  it("discards a profile that mispredicts the job's first measurements, in plain words, and keeps the profile clean", async () => {
    const { store, book, lines } = await open();
    await learn({ store, book }, await job(store, 'a', 'train'), [point(1), point(2)]);
    const wrong = await job(store, 'w', 'train');
    assert.equal((await book.forRound([wrong])).size, 1);
    // Measured at a shape the profile does not know: nothing to judge yet, so it is merged.
    const unknownShape = await learn({ store, book }, (await store.getJob('w'))!, [point(3, 3)]);
    assert.equal(unknownShape!.jobs, 2);
    const bad = await open();
    await learn(bad, await job(bad.store, 'a', 'train'), [point(1), point(2)]);
    const w = await job(bad.store, 'w', 'train');
    assert.equal(await learn(bad, w, [point(2, 3)]), undefined, 'three times slower at a measured shape');
    assert.equal(w.profile_use, 'discarded');
    const event = (await bad.store.listEvents('w')).find((e) => e.kind === 'profile-discarded')!;
    assert.match(
      event.reason,
      /profile of 'train' on cpu discarded: an optimizer step at 2 replicas and local batch 32 took [\d.]+ s where the profile predicts [\d.]+ s \(off by 6\d% of the measurement, tolerance 40%\)/,
    );
    assert.match(event.reason, /its own measurements only/);
    assert.equal(bad.lines.length, 1);
    const profile = (await bad.store.getKeyProfile(scopedKey('train', 'u'), 'cpu'))!;
    assert.deepEqual([profile.jobs, profile.job_ids], [1, ['a']], 'the discarded job adds nothing');
    assert.equal(
      (await bad.book.forRound([(await bad.store.getJob('w'))!])).size,
      0,
      'nor does it start from it again',
    );
    assert.equal(await learn(bad, (await bad.store.getJob('w'))!, [point(2, 3)]), undefined);
    assert.equal(lines.length, 0);
    await store.close();
    await bad.store.close();
  });

  it('does not judge a job by the points it merged itself, before or after a server restart', async () => {
    const { store, book } = await open();
    await learn({ store, book }, await job(store, 'a', 'train'), [point(1), point(2)]);
    // Its first steps at 3 replicas (a shape only it measured) were slow: merged, unjudged.
    await learn({ store, book }, await job(store, 'w', 'train'), [point(3, 2)]);
    // Its later steps there are at the profile's speed: against its own first steps they are off by half.
    const later = [point(3, 1, 48), point(3, 2)];
    assert.equal((await learn({ store, book }, (await store.getJob('w'))!, later))!.jobs, 2, 'still merged');
    assert.notEqual((await store.getJob('w'))!.profile_use, 'discarded');
    // In this server it is judged at a shape other jobs measured: three times slower at 2 replicas discards.
    const judged = await open();
    await learn(judged, await job(judged.store, 'a', 'train'), [point(1), point(2)]);
    await learn(judged, await job(judged.store, 'w', 'train'), [point(3, 2)]);
    assert.equal(await learn(judged, (await judged.store.getJob('w'))!, [point(3, 1, 48), point(2, 3)]), undefined);
    assert.equal((await judged.store.getJob('w'))!.profile_use, 'discarded');
    // A restarted server does not know which of a merged job's shapes are its own: it judges none
    // (a profile kept by mistake costs a job's model less than one discarded by mistake costs the key).
    const restarted = new ProfileBook(
      store,
      () => [cpuNode('local')],
      () => {},
    );
    assert.equal(
      (await learn({ store, book: restarted }, (await store.getJob('w'))!, [point(3, 1, 64), point(2, 3)]))!.jobs,
      2,
    );
    assert.notEqual((await store.getJob('w'))!.profile_use, 'discarded');
    await store.close();
    await judged.store.close();
  });
});
