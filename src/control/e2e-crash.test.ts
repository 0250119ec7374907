/**
 * End to end crash safety: kill -9 of the server while jobs run, then `goodput up` again:
 * running replicas are re-adopted (same processes, no second copy), exits that happened while
 * the server was down are accounted for; kill -9 of a replica restarts the job from its
 * checkpoint; a job failing more than max_restarts ends failed.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { GoodputClient } from '../client/client.js';
import {
  cleanup,
  killGroup,
  sleep,
  startServerProcess,
  tempDataDir,
  TRAINER,
  trainerLines,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';

const data_dir = tempDataDir();
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));

const serverArgs = ['--cpu-slots', '4', '--interval-s', '1', '--grace-s', '3'];
const trainer = (samples: number, ...extra: string[]) => [
  process.execPath,
  TRAINER,
  '--samples',
  String(samples),
  '--time-scale',
  '0.5',
  ...extra,
];
const log = (job: string) => readFileSync(join(data_dir, 'jobs', job, 'logs', 'replica-0.log'), 'utf8');
const finished = (client: GoodputClient, id: string, timeout_ms: number) =>
  waitFor(`job ${id} to finish`, timeout_ms, async () => {
    const j = await client.getJob(id);
    return ['succeeded', 'failed', 'cancelled'].includes(j.state) ? j : undefined;
  });

describe('crash safety', () => {
  it(
    're-adopts running replicas after kill -9 of the server and accounts for exits while it was down',
    { timeout: 60_000 },
    async () => {
      const s1 = await startServerProcess(data_dir, serverArgs);
      servers.push(s1);
      const x = await s1.client.submit({ name: 'long', command: trainer(30000), workdir: data_dir });
      const y = await s1.client.submit({ name: 'short', command: trainer(4000), workdir: data_dir });
      const before = await waitFor('both jobs to run and report', 15_000, async () => {
        const [jx, jy] = [await s1.client.getJob(x.id), await s1.client.getJob(y.id)];
        return jx.state === 'running' && jy.state === 'running' && jx.step > 0 && jy.step > 0 ? jx : undefined;
      });
      const pid = before.current_replicas[0]!.pid;

      killGroup(s1.pid);
      await waitFor('the short job to finish while the server is down', 20_000, async () =>
        trainerLines(log(y.id)).some((l) => l.kind === 'done'),
      );
      const stepWhileDown = trainerLines(log(x.id));
      assert.equal(stepWhileDown.filter((l) => l.kind === 'resumed').length, 1);

      // Same port: the replicas' GOODPUT_API still points at it.
      const s2 = await startServerProcess(data_dir, [...serverArgs, '--port', new URL(s1.url).port]);
      servers.push(s2);
      const jy = await finished(s2.client, y.id, 10_000);
      assert.equal(jy.state, 'succeeded', 'exit 0 recorded while the server was down');
      assert.equal(jy.restarts, 0);
      const jx = await s2.client.getJob(x.id);
      assert.equal(jx.state, 'running');
      assert.equal(jx.current_replicas[0]!.pid, pid, 're-adopted: the same process');
      assert.equal(jx.attempt, 0);
      const reportsBefore = jx.step;
      await waitFor(
        'reports to reach the new server',
        10_000,
        async () => (await s2.client.getJob(x.id)).step > reportsBefore,
      );
      const done = await finished(s2.client, x.id, 40_000);
      assert.equal(done.state, 'succeeded');
      assert.equal(done.restarts, 0, 'never relaunched');
      assert.equal(
        trainerLines(log(x.id)).filter((l) => l.kind === 'resumed').length,
        1,
        'exactly one trainer process ever ran',
      );
      const all = await s2.client.listJobs();
      assert.deepEqual(all.map((j) => j.id).sort(), [x.id, y.id].sort(), 'nothing lost, nothing duplicated');
      for (const id of [x.id, y.id]) {
        const events = await s2.client.events(id);
        assert.equal(events.filter((e) => e.kind === 'launched').length, 1, `${id} launched once`);
      }
    },
  );

  it(
    'restarts a job from its checkpoint after kill -9 of a replica; fails a job past max_restarts',
    { timeout: 60_000 },
    async () => {
      const server = servers[servers.length - 1]!;
      const { client } = server;
      const k = await client.submit({ name: 'victim', command: trainer(20000), workdir: data_dir, max_restarts: 2 });
      const f = await client.submit({
        name: 'flaky',
        command: trainer(20000, '--fail-at-step', '3'),
        workdir: data_dir,
        max_restarts: 0,
      });
      const running = await waitFor('victim to make progress', 15_000, async () => {
        const j = await client.getJob(k.id);
        return j.state === 'running' &&
          j.step > 20 &&
          existsSync(join(data_dir, 'jobs', k.id, 'checkpoint', 'synthetic.json'))
          ? j
          : undefined;
      });
      killGroup(running.current_replicas[0]!.pid);
      const done = await finished(client, k.id, 40_000);
      assert.equal(done.state, 'succeeded');
      assert.equal(done.failures, 1);
      assert.equal(done.restarts, 1);
      const events = await client.events(k.id);
      const failure = events.find((e) => e.kind === 'failed-replica');
      assert.ok(failure, 'the failure is an event');
      assert.match(failure.reason, /replica 0 failed with exit code 137/);
      assert.ok(events.some((e) => e.kind === 'relaunch' && /restart 1\/2 after 1s backoff/.test(e.reason)));
      const resumed = trainerLines(log(k.id)).filter((l) => l.kind === 'resumed');
      assert.equal(resumed.length, 2);
      assert.ok(
        resumed[1]!.step > 0 && resumed[1]!.attempt === 1,
        `attempt 1 resumed from the checkpoint (step ${resumed[1]!.step})`,
      );

      const jf = await finished(client, f.id, 20_000);
      assert.equal(jf.state, 'failed');
      assert.match(jf.reason, /1 failures, more than max_restarts \(0\)/);
      await sleep(10);
    },
  );
});
