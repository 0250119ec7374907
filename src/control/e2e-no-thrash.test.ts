/**
 * End to end (real `goodput up`, real CLI and processes): the default policy never thrashes.
 * Plain jobs (no SDK, no checkpoint) run to the end once started, also across a kill -9 of the
 * server; synthetic SDK jobs of unknown length share 2 slots with a bounded number of restarts,
 * the short ones first. The figures (how soon the plain jobs finish) come from `npm run
 * bench:live`, not from here.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { GoodputClient, JobDetail } from '../client/client.js';
import { defaultGoodputPolicyParams } from '../policy/goodput/job-view.js';
import { cleanup, killGroup, PLAIN_20S, runCli, sleep, startServerProcess, tempDataDir, TRAINER, waitFor, type ServerProcess } from '../../test-support/control/harness.js';

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

const summary = (jobs: readonly JobDetail[]) => jobs.map((j) => `${j.name}: ${j.state}, ${j.restarts} restarts (${j.reason})`).join('; ');

describe('no thrashing', () => {
  it('three plain 20 s jobs on 2 slots all succeed without a restart; show says why a running one is kept', { timeout: 180_000 }, async () => {
    const data_dir = tempDataDir();
    dirs.push(data_dir);
    const server = await startServerProcess(data_dir, ['--cpu-slots', '2', '--interval-s', '2', '--grace-s', '3']);
    servers.push(server);
    const env = { GOODPUT_DATA_DIR: data_dir };
    const ids: string[] = [];
    for (const name of ['bar-1', 'bar-2', 'bar-3']) {
      const out = await runCli(['submit', '--name', name, '--json', '--', ...PLAIN_20S], env);
      assert.equal(out.status, 0, out.stderr);
      ids.push((JSON.parse(out.stdout) as { id: string }).id);
    }
    const running = await waitFor('two jobs to run', 20_000, async () => {
      const jobs = await Promise.all(ids.map((id) => server.client.getJob(id)));
      const run = jobs.filter((j) => j.state === 'running');
      return run.length === 2 ? run : undefined;
    });
    // Several rounds pass (interval 2 s) while the third job waits: nothing is swapped.
    await sleep(5000);
    const shown = await runCli(['show', running[0]!.id], env);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /kept +not preempted or resized: no checkpoint yet.*set preemptible: true to allow/);
    const jobs = await allEnded(server.client, ids, 120_000);
    assert.ok(jobs.every((j) => j.state === 'succeeded' && j.restarts === 0), summary(jobs));
  });

  it('the same after kill -9 of the server 6 s in and a restart', { timeout: 180_000 }, async () => {
    const data_dir = tempDataDir();
    dirs.push(data_dir);
    const args = ['--cpu-slots', '2', '--interval-s', '2', '--grace-s', '3'];
    const s1 = await startServerProcess(data_dir, args);
    servers.push(s1);
    const ids: string[] = [];
    for (const name of ['bar-1', 'bar-2', 'bar-3']) ids.push((await s1.client.submit({ name, command: [...PLAIN_20S], workdir: data_dir })).id);
    await sleep(6000);
    killGroup(s1.pid);
    const s2 = await startServerProcess(data_dir, [...args, '--port', new URL(s1.url).port]);
    servers.push(s2);
    const jobs = await allEnded(s2.client, ids, 120_000);
    assert.ok(jobs.every((j) => j.state === 'succeeded' && j.restarts === 0), summary(jobs));
  });

  it('eight SDK jobs of unknown length on 2 slots: all succeed, restarts within the bound, short ones first', { timeout: 240_000 }, async () => {
    const data_dir = tempDataDir();
    dirs.push(data_dir);
    // Queues and slices at the scale of these seconds-long jobs.
    const params = ['restart_delay_s=1', 'queue_base_gpu_s=4', 'min_slice_restarts=3'].flatMap((p) => ['--policy-param', p]);
    const server = await startServerProcess(data_dir, ['--cpu-slots', '2', '--interval-s', '1', '--grace-s', '3', ...params]);
    servers.push(server);
    // Long (~20 s alone) and short (~2 s) jobs, interleaved in submission order.
    const lengths = [25_000, 2_500, 25_000, 2_500, 25_000, 2_500, 25_000, 2_500];
    const ids: string[] = [];
    for (const [i, samples] of lengths.entries()) {
      const command = [process.execPath, TRAINER, '--samples', String(samples), '--unknown-length'];
      ids.push((await server.client.submit({ name: `sdk-${i}`, command, workdir: data_dir })).id);
    }
    const jobs = await allEnded(server.client, ids, 200_000);
    assert.ok(jobs.every((j) => j.state === 'succeeded'), summary(jobs));
    for (const j of jobs) assert.ok(j.restarts <= defaultGoodputPolicyParams.max_preemptions, summary(jobs));
    const finished = (j: JobDetail) => Date.parse(j.finished_at!);
    const short = jobs.filter((_, i) => lengths[i] === 2_500);
    const long = jobs.filter((_, i) => lengths[i] === 25_000);
    assert.ok(Math.max(...short.map(finished)) < Math.min(...long.map(finished)), `short jobs finish before every long one: ${summary(jobs)}`);
  });
});
