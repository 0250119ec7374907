import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuNodeFixture } from '../testing/control-driver.js';
import { perfPoint } from '../../goodput/testing/perf-fixture.js';
import type { ProfilePoint } from '../../goodput/types.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { Store } from '../../store/store.js';
import { trainSpecFixture } from '../../store/job-fixture.js';
import { ProfileBook } from './profile-book.js';
import { refitJob } from './refit.js';

const point = (num_replicas: number, scale = 1): ProfilePoint => perfPoint({ num_replicas, scale });
const node = cpuNodeFixture(4);
const spec = trainSpecFixture();

/** The store, recording which of its methods are called (reads and writes alike). */
function recorded(store: SqliteStore): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

const WRITES = /^(save|merge|delete|set|record|add|create|assign|launch|finish|stop|put|revoke)/;

describe('refitJob', () => {
  it("reads, computes, then writes once: the job's fit, a discard and the profile merge in one saveRefit", async () => {
    const sqlite = new SqliteStore(':memory:');
    const { store, calls } = recorded(sqlite);
    const book = new ProfileBook(
      store,
      () => [node],
      () => {},
    );
    for (const id of ['a', 'b', 'w']) await sqlite.createJob({ id, name: id, user: 'u', spec }, 'u');
    await refitJob({ store, log: () => {}, profiles: book }, (await sqlite.getJob('a'))!, [point(1), point(2)]);
    const merged = await refitJob({ store, log: () => {}, profiles: book }, (await sqlite.getJob('b'))!, [
      point(2, 1.05),
    ]);
    assert.deepEqual(merged!.job_ids, ['a', 'b'], 'an agreeing job merges');
    calls.length = 0;
    const w = (await sqlite.getJob('w'))!;
    assert.equal(
      await refitJob({ store, log: () => {}, profiles: book }, w, [point(2, 3)]),
      undefined,
      'three times slower: discarded',
    );
    assert.deepEqual(
      calls.filter((c) => WRITES.test(c)),
      ['saveRefit'],
      `one write per refit, after all reads: ${calls.join(', ')}`,
    );
    assert.equal(calls.at(-1), 'saveRefit');
    const stored = (await sqlite.getJob('w'))!;
    assert.deepEqual(
      [stored.profile_use, stored.perf, w.profile_use],
      ['discarded', w.perf, 'discarded'],
      'the job in memory is the job stored',
    );
    await sqlite.close();
  });

  it("a store that fails the write leaves the job's model and the profile as they were", async () => {
    const sqlite = new SqliteStore(':memory:');
    await sqlite.createJob({ id: 'a', name: 'a', user: 'u', spec }, 'u');
    const failing = new Proxy(sqlite, {
      get: (t, name, r) =>
        name === 'saveRefit' ? () => Promise.reject(new Error('disk full')) : (Reflect.get(t, name, r) as unknown),
    });
    const book = new ProfileBook(
      failing,
      () => [node],
      () => {},
    );
    const job = (await sqlite.getJob('a'))!;
    await assert.rejects(refitJob({ store: failing, log: () => {}, profiles: book }, job, [point(1)]), /disk full/);
    assert.deepEqual(
      [job.perf, (await sqlite.getJob('a'))!.perf, (await sqlite.listKeyProfiles()).length],
      [null, null, 0],
    );
    assert.equal(book.latestFor(job), undefined, 'the report path does not see a profile that was not saved');
    await sqlite.close();
  });
});
