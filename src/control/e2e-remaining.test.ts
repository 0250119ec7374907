/**
 * End to end: the control plane's default policy (goodput) ranks jobs by the remaining work
 * their trainers report. A short job that has already run a while keeps most of the slots when a
 * long job arrives; ranking by attained service instead would favour the newcomer. Six slots for
 * two jobs of at most four replicas each: the long job gets a slot whatever the ranking (the
 * default may leave a job with the most work left waiting when the others can use every slot, as
 * shortest-remaining-first does), so it runs and reports, and the split shows the ranking: 4/2
 * with the short job first, 2/4 with the long one.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  cleanup,
  sleep,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';

const data_dir = tempDataDir();
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));

describe('remaining work reaches the default policy', () => {
  it('a short job keeps its head start when a long job arrives', { timeout: 90_000 }, async () => {
    const server = await startServerProcess(data_dir, ['--cpu-slots', '6', '--interval-s', '1', '--grace-s', '2']);
    servers.push(server);
    const { client } = server;
    const submit = (name: string, samples: number) =>
      client.submit({
        name,
        command: [process.execPath, TRAINER, '--samples', String(samples), '--time-scale', '0.5'],
        workdir: data_dir,
        max_replicas: 4,
      });
    const short = await submit('short', 400_000);
    await waitFor('the short job to run and report its remaining work', 20_000, async () => {
      const j = await client.getJob(short.id);
      return j.state === 'running' && j.remaining_samples !== null && j.step > 5;
    });
    const long = await submit('long', 50_000_000);
    // Once the long job has reported (a fitted model and its remaining work), it may grow past its
    // first slot; the short job must stay ahead of it.
    await waitFor('the long job to report its remaining work', 30_000, async () => {
      const j = await client.getJob(long.id);
      return j.state === 'running' && j.remaining_samples !== null && j.perf !== null ? j : undefined;
    });
    const seen: string[] = [];
    const steady = await waitFor('the short job to hold most slots', 30_000, async () => {
      const [s, l] = [await client.getJob(short.id), await client.getJob(long.id)];
      seen.push(`${s.replicas}/${l.replicas}`);
      if (s.state === 'running' && l.state === 'running' && s.replicas >= 4 && l.replicas >= 1) return [s, l];
      const said = (await client.events(short.id))
        .map((e) => e.reason)
        .concat(
          ['LONG:'],
          (await client.events(long.id)).map((e) => e.reason),
        );
      throw new Error(
        `short/long: ${s.state} ${l.state}, ${seen.slice(-8).join(' ')}; short's events: ${said.join(' | ')}`,
      );
    });
    assert.ok(steady[0].remaining_samples! < steady[1].remaining_samples!, 'the short job has less work left');
    // It stays so for several scheduling rounds while both run.
    for (let i = 0; i < 6; i++) {
      await sleep(1000);
      const [s, l] = [await client.getJob(short.id), await client.getJob(long.id)];
      if (s.state !== 'running') break;
      seen.push(`${s.replicas}/${l.replicas}`);
      assert.ok(s.replicas > l.replicas, `short/long replicas over time: ${seen.join(' ')}`);
    }
    await client.cancel(long.id);
    await client.cancel(short.id);
  });
});
