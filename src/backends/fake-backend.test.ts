import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../util/clock.js';
import type { LaunchRequest, ReplicaExit } from './backend.js';
import { FakeBackend, FakeCluster, fakeNode } from './fake-backend.js';
import { launchRequestFixture } from './testing/launch-request.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-fake-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Two ranks of `job_id` on the first node running `script`. */
const request = (job_id: string, script: string): LaunchRequest =>
  launchRequestFixture(root, job_id, [process.execPath, '-e', script], { devices: [0, 1], nodes: [0, 0] });

describe('FakeBackend on a FakeClock', () => {
  it('an hour-long program ends when the fake clock says so, in no wall time', async () => {
    const clock = new FakeClock();
    const backend = new FakeBackend(new FakeCluster([fakeNode('n', 2)], clock));
    const exits: ReplicaExit[] = [];
    backend.onExit((e) => exits.push(e));
    const started = Date.now();
    await backend.launch(request('long', 'setTimeout(() => process.exit(Number(process.env.RANK) + 3), 3_600_000);'));
    await clock.advance(3_599_000);
    assert.equal(exits.length, 0);
    assert.equal(
      backend.probe({
        job_id: 'long',
        attempt: 0,
        rank: 0,
        node: 'n',
        launch_id: '',
        pid: 0,
        proc_start: '',
        job_dir: '',
      }),
      'alive',
    );
    await clock.advance(1_000);
    assert.deepEqual(
      exits.map((e) => [e.rank, e.exit_code]),
      [
        [0, 3],
        [1, 4],
      ],
    );
    assert.ok(Date.now() - started < 2_000, 'no wall time');
  });

  it('a program without a SIGTERM handler ends 143; an unknown command is E_LAUNCH', async () => {
    const clock = new FakeClock();
    const backend = new FakeBackend(new FakeCluster([fakeNode('n', 2)], clock));
    const exits: ReplicaExit[] = [];
    backend.onExit((e) => exits.push(e));
    const launched = await backend.launch(request('term', 'setInterval(() => {}, 1000);'));
    await clock.advance(5_000);
    for (const r of launched)
      backend.signal(
        { job_id: 'term', attempt: 0, rank: r.rank, node: r.node, launch_id: '', pid: 0, proc_start: '', job_dir: '' },
        'SIGTERM',
      );
    assert.deepEqual(
      exits.map((e) => e.exit_code),
      [143, 143],
    );
    await assert.rejects(
      backend.launch({ ...request('sh', ''), command: ['/bin/sh', '-c', 'true'] }),
      /E_LAUNCH|only 'node -e/,
    );
  });

  it('programless: seeded and launched replicas run until signalled, SIGTERM ends them 143, a second backend adopts them', async () => {
    const cluster = new FakeCluster([fakeNode('n', 2)], new FakeClock(), true);
    cluster.seed('old', 0, 0, 'n');
    const backend = new FakeBackend(cluster);
    const exits: ReplicaExit[] = [];
    backend.onExit((e) => exits.push(e));
    const ref = (job_id: string, rank: number) => ({
      job_id,
      attempt: 0,
      rank,
      node: 'n',
      launch_id: '',
      pid: 0,
      proc_start: '',
      job_dir: join(root, job_id),
    });
    assert.equal(await backend.adopt(ref('old', 0)), 'alive');
    // A program that would exit at once: programless, it never runs.
    await backend.launch(request('new', 'process.exit(3)'));
    await new Promise((r) => setImmediate(r));
    assert.equal(exits.length, 0, 'nothing ran, nothing ended');
    assert.equal(cluster.running.size, 3);
    backend.signal(ref('new', 1), 'SIGTERM');
    backend.signal(ref('old', 0), 'SIGTERM');
    assert.deepEqual(
      exits.map((e) => `${e.job_id}/${e.rank}:${e.exit_code}`),
      ['new/1:143', 'old/0:143'],
    );
  });
});
