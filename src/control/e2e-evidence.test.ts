/**
 * End to end (real `goodput up`, synthetic trainers): no growth before evidence. A job is grown
 * only after its first throughput measurement, and a growth that measured slower is undone at
 * once: with 60 s rounds, only the round a new measurement triggers can undo it within seconds.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { EventView, GoodputClient } from '../client/client.js';
import { cleanup, sleep, startServerProcess, tempDataDir, TRAINER, waitFor, type ServerProcess } from '../../test-support/control/harness.js';

const servers: ServerProcess[] = [];
const dirs: string[] = [];
after(() => {
  for (const d of dirs) cleanup(d, servers);
});

/** A fresh `goodput up` on 4 CPU slots with rounds every `interval_s`. */
async function server(interval_s: number): Promise<{ server: ServerProcess; data_dir: string }> {
  const data_dir = tempDataDir();
  dirs.push(data_dir);
  const started = await startServerProcess(data_dir, ['--cpu-slots', '4', '--interval-s', String(interval_s), '--grace-s', '3', '--policy-param', 'restart_delay_s=1']);
  servers.push(started);
  return { server: started, data_dir };
}

const replicasOf = (e: EventView): number | undefined => {
  const m = /\b\d+ -> (\d+)\b/.exec(e.reason);
  return m ? Number(m[1]) : undefined;
};
const isGrowth = (e: EventView): boolean => e.kind === 'rescale' && (replicasOf(e) ?? 0) > 1;
/** A long synthetic job that may use all 4 slots. */
const submitTrainer = (client: GoodputClient, data_dir: string, name: string, ...extra: string[]) =>
  client.submit({ name, command: [process.execPath, TRAINER, '--samples', '10000000', ...extra], workdir: data_dir, max_replicas: 4 });

describe('no growth before evidence', () => {
  it('grows a job only after its first report', { timeout: 90_000 }, async () => {
    const { server: { client }, data_dir } = await server(1);
    // The first report comes 3 s after the start; rounds run every second meanwhile.
    const job = await submitTrainer(client, data_dir, 'grow', '--report-every-s', '3');
    const grown = await waitFor('the job to grow', 45_000, async () => (await client.events(job.id)).find(isGrowth));
    const first = (await client.reports(job.id, 1000))[0];
    assert.ok(first, 'it has reported');
    assert.ok(Date.parse(grown.at) >= first.received_at_ms, `grown at ${grown.at}, first report at ${new Date(first.received_at_ms).toISOString()}`);
    await client.cancel(job.id);
  });

  it('never grows a job that reports no measurement, even one that may be stopped at any time', { timeout: 60_000 }, async () => {
    const { server: { client }, data_dir } = await server(1);
    const job = await client.submit({ name: 'plain', command: ['sleep', '30'], workdir: data_dir, max_replicas: 4, preemptible: true });
    await waitFor('the job to run', 15_000, async () => (await client.getJob(job.id)).state === 'running');
    // Rounds every second, 3 idle slots, and its minimum slice (4 s) long over.
    await sleep(12_000);
    const now = await client.getJob(job.id);
    assert.equal(now.replicas, 1);
    assert.deepEqual((await client.events(job.id)).filter((e) => e.kind === 'rescale'), []);
    await client.cancel(job.id);
  });

  it('undoes a growth that measured slower within seconds, not at the next 60 s round', { timeout: 90_000 }, async () => {
    const { server: { client }, data_dir } = await server(60);
    const job = await submitTrainer(client, data_dir, 'slow-growth', '--multi-replica-slowdown', '6');
    const events = await waitFor('a growth, then a shrink back', 60_000, async () => {
      const all = await client.events(job.id);
      const grow = all.findIndex(isGrowth);
      return grow >= 0 && all.slice(grow + 1).some((e) => e.kind === 'rescale') ? all : undefined;
    });
    const grow = events.find(isGrowth)!;
    const shrink = events.filter((e) => e.kind === 'rescale').find((e) => Date.parse(e.at) > Date.parse(grow.at))!;
    assert.ok((replicasOf(shrink) ?? 99) < (replicasOf(grow) ?? 0), `${grow.reason}; then ${shrink.reason}`);
    assert.ok(Date.parse(shrink.at) - Date.parse(grow.at) < 45_000, `before the next 60 s round: ${events.map((e) => `${e.at} ${e.kind} ${e.reason}`).join('\n')}`);
    await client.cancel(job.id);
  });
});
