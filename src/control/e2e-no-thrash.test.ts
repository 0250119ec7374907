/**
 * End to end (real `goodput up`, real CLI and processes): the default policy never thrashes.
 * Plain jobs (no SDK, no checkpoint) run to the end once started, also across a kill -9 of the
 * server, and `goodput show` says why a running one is kept. The decisions alone (plain jobs
 * without a restart, SDK jobs of unknown length with a bounded number of restarts, the short
 * ones first) are checked in fake time by no-thrash.test.ts. The figures (how soon the plain
 * jobs finish) come from `npm run bench:live`, not from here.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { GoodputClient, JobDetail } from '../client/client.js';
import {
  cleanup,
  killGroup,
  PLAIN_20S,
  runCli,
  sleep,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';

const servers: ServerProcess[] = [];
const dirs: string[] = [];
after(() => {
  for (const d of dirs) cleanup(d, servers);
});

const allEnded = (client: GoodputClient, ids: readonly string[], timeout_ms: number): Promise<JobDetail[]> =>
  waitFor(`jobs ${ids.join(', ')} to end`, timeout_ms, async () => {
    const jobs = await Promise.all(ids.map((id) => client.getJob(id)));
    return jobs.every((j) => ['succeeded', 'failed', 'cancelled'].includes(j.state)) ? jobs : undefined;
  });

const summary = (jobs: readonly JobDetail[]) =>
  jobs.map((j) => `${j.name}: ${j.state}, ${j.restarts} restarts (${j.reason})`).join('; ');

describe('no thrashing', () => {
  it(
    'three plain 20 s jobs on 2 slots all succeed without a restart across a kill -9 of the server 6 s in and a restart; show says why a running one is kept',
    { timeout: 180_000 },
    async () => {
      const data_dir = tempDataDir();
      dirs.push(data_dir);
      const args = ['--cpu-slots', '2', '--interval-s', '2', '--grace-s', '3'];
      const s1 = await startServerProcess(data_dir, args);
      servers.push(s1);
      const ids: string[] = [];
      for (const name of ['bar-1', 'bar-2', 'bar-3'])
        ids.push((await s1.client.submit({ name, command: [...PLAIN_20S], workdir: data_dir })).id);
      await sleep(6000);
      killGroup(s1.pid);
      const s2 = await startServerProcess(data_dir, [...args, '--port', new URL(s1.url).port]);
      servers.push(s2);
      const running = await waitFor('a job to run', 20_000, async () =>
        (await Promise.all(ids.map((id) => s2.client.getJob(id)))).find((j) => j.state === 'running'),
      );
      const shown = await runCli(['show', running.id], { GOODPUT_DATA_DIR: data_dir });
      assert.equal(shown.status, 0, shown.stderr);
      assert.match(shown.stdout, /kept +not preempted or resized: no checkpoint yet.*set preemptible: true to allow/);
      const jobs = await allEnded(s2.client, ids, 120_000);
      assert.ok(
        jobs.every((j) => j.state === 'succeeded' && j.restarts === 0),
        summary(jobs),
      );
    },
  );
});
