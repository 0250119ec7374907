/**
 * The launcher's pump (every tick) on a steady cluster: no job starting or stopping and no kill
 * due, so it does not read every live replica (at 16,000 replicas that read cost tens of ms each
 * 250 ms tick; bench:scale, issue #49). Real SQLite store, fake backend and clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeBackend, FakeCluster, fakeNode } from '../../backends/fake-backend.js';
import { findPolicy } from '../../policy/registry.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { FakeClock } from '../../util/clock.js';
import { Controller } from '../controller.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-pump-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('the pump on a steady cluster', () => {
  it('reads the live replicas only at the watch (every 2 s), not at every 250 ms tick', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const store = new SqliteStore(':memory:', { now_ms: () => clock.now_ms() });
    const controller = new Controller({
      store,
      backend: new FakeBackend(new FakeCluster([fakeNode('n0', 2)], clock)),
      policy: findPolicy('fifo')!.create({ seed: 0 }),
      data_dir: mkdtempSync(join(root, 'data-')),
      secret: 's',
      api_url: 'http://127.0.0.1:1',
      interval_s: 3600,
      grace_s: 10,
      clock,
    });
    await controller.start();
    const spec = {
      name: 'j',
      command: [process.execPath, '-e', 'setTimeout(() => process.exit(0), 3_600_000);'],
      workdir: root,
      env: {},
      min_replicas: 1,
      max_replicas: 2,
      max_restarts: 0,
      preemptible: true,
      priority: 0,
    };
    const job = await controller.submit(spec, 'u', 'u');
    await clock.until(async () => (await store.getJob(job.id))!.state === 'running', 10_000);
    await clock.advance(5_000);
    let reads = 0;
    const read = store.listLiveReplicas.bind(store);
    store.listLiveReplicas = () => {
      reads++;
      return read();
    };
    await clock.advance(10_000); // 40 ticks, 5 watches
    assert.ok(reads <= 6, `the live replicas were read ${reads} times in 40 ticks`);
    assert.ok(reads >= 4, `the watch still reads them (${reads} times in 10 s)`);
    assert.equal((await store.getJob(job.id))!.state, 'running');
    await controller.stop();
    await store.close();
  });
});
