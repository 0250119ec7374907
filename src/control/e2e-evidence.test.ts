/**
 * End to end (real `goodput up`, synthetic trainers): no growth before evidence. A job is grown
 * only after its first throughput measurement posted over HTTP. The rest of the rule (a job that
 * never reports is never grown; a growth that measured slower is undone within seconds, not at
 * the next 60 s round) is checked in fake time by evidence.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { EventView, GoodputClient } from '../client/client.js';
import {
  cleanup,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';

const servers: ServerProcess[] = [];
const dirs: string[] = [];
after(() => {
  for (const d of dirs) cleanup(d, servers);
});

/** A fresh `goodput up` on 4 CPU slots with rounds every `interval_s`. */
async function server(interval_s: number): Promise<{ server: ServerProcess; data_dir: string }> {
  const data_dir = tempDataDir();
  dirs.push(data_dir);
  const started = await startServerProcess(data_dir, [
    '--cpu-slots',
    '4',
    '--interval-s',
    String(interval_s),
    '--grace-s',
    '3',
    '--policy-param',
    'restart_delay_s=1',
  ]);
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
  client.submit({
    name,
    command: [process.execPath, TRAINER, '--samples', '10000000', ...extra],
    workdir: data_dir,
    max_replicas: 4,
  });

describe('no growth before evidence', () => {
  it('grows a job only after its first report', { timeout: 90_000 }, async () => {
    const {
      server: { client },
      data_dir,
    } = await server(1);
    // The first report comes 3 s after the start; rounds run every second meanwhile.
    const job = await submitTrainer(client, data_dir, 'grow', '--report-every-s', '3');
    const grown = await waitFor('the job to grow', 45_000, async () => (await client.events(job.id)).find(isGrowth));
    const first = (await client.reports(job.id, 1000))[0];
    assert.ok(first, 'it has reported');
    assert.ok(
      Date.parse(grown.at) >= first.received_at_ms,
      `grown at ${grown.at}, first report at ${new Date(first.received_at_ms).toISOString()}`,
    );
    await client.cancel(job.id);
  });
});
