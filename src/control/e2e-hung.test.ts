/**
 * End to end hung detection: a synthetic SDK job whose replica is SIGSTOPped (alive but silent)
 * is found hung within the (shortened) timeout, its replica is killed, and the job restarts from
 * its checkpoint and succeeds, losing no progress beyond that checkpoint. A plain job that never
 * reports is never judged.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAlive } from '../backends/local/process-info.js';
import {
  cleanup,
  runCli,
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
let server: ServerProcess;
// Long enough for a relaunched trainer to start and report on a loaded machine.
const HUNG_TIMEOUT_S = 6;
const log = (job: string) => readFileSync(join(data_dir, 'jobs', job, 'logs', 'replica-0.log'), 'utf8');
const checkpointStep = (job: string) =>
  (JSON.parse(readFileSync(join(data_dir, 'jobs', job, 'checkpoint', 'synthetic.json'), 'utf8')) as { step: number })
    .step;

describe('hung replicas', () => {
  before(async () => {
    server = await startServerProcess(data_dir, [
      '--cpu-slots',
      '2',
      '--interval-s',
      '1',
      '--grace-s',
      '2',
      '--policy',
      'fifo',
      '--hung-timeout-s',
      String(HUNG_TIMEOUT_S),
    ]);
    servers.push(server);
  });

  it(
    'kills a SIGSTOPped SDK replica, restarts the job from its checkpoint, and it succeeds',
    { timeout: 90_000 },
    async () => {
      const { client } = server;
      const job = await client.submit({
        name: 'frozen',
        command: [process.execPath, TRAINER, '--samples', '12000', '--time-scale', '0.5'],
        workdir: data_dir,
      });
      // A plain job beside it, silent for longer than the timeout: never judged hung.
      const plain = await client.submit({
        name: 'plain',
        command: ['sh', '-c', `sleep ${HUNG_TIMEOUT_S * 3}`],
        workdir: data_dir,
      });
      const running = await waitFor('the SDK job to report and checkpoint', 20_000, async () => {
        const j = await client.getJob(job.id);
        return j.state === 'running' &&
          j.step > 10 &&
          existsSync(join(data_dir, 'jobs', job.id, 'checkpoint', 'synthetic.json'))
          ? j
          : undefined;
      });
      const replica = running.current_replicas[0]!;
      process.kill(-replica.pid, 'SIGSTOP');
      const stoppedAt = Date.now();
      const saved = checkpointStep(job.id);

      const hung = await waitFor('the job to be found hung', HUNG_TIMEOUT_S * 1000 + 15_000, async () => {
        const events = await client.events(job.id);
        return events.find((e) => e.kind === 'hung');
      });
      assert.match(hung.reason, /^hung: no report for \d+s \(limit \d+(\.\d+)?s\)/);
      // The timeout counts from the newest report, which came (at most a few report periods) before the stop.
      assert.ok(Date.parse(hung.at) - stoppedAt >= HUNG_TIMEOUT_S * 1000 - 2000, 'not before the timeout');
      await waitFor('the stopped replica to be gone', 10_000, async () => !isAlive(replica.pid, ''));
      const shown = await client.getJob(job.id);
      assert.match(shown.health ?? '', /^hung: /, 'marked');
      const ls = await runCli(['ls', '--data-dir', data_dir]);
      assert.match(ls.stdout, new RegExp(`^${job.id}\\s+frozen\\s.*hung: no report`, 'm'), 'ls shows why');
      const show = await runCli(['show', job.id, '--data-dir', data_dir]);
      assert.match(show.stdout, /health\s+hung: no report/);

      const done = await waitFor('the job to finish', 60_000, async () => {
        const j = await client.getJob(job.id);
        return ['succeeded', 'failed', 'cancelled'].includes(j.state) ? j : undefined;
      });
      assert.equal(done.state, 'succeeded', done.reason);
      assert.equal(done.failures, 1, 'the hang counts as one failure');
      assert.equal(done.restarts, 1);
      const resumed = trainerLines(log(job.id)).filter((l) => l.kind === 'resumed');
      assert.equal(resumed.length, 2);
      assert.equal(resumed[1]!.attempt, 1);
      assert.ok(
        resumed[1]!.step >= saved && saved > 0,
        `resumed at step ${resumed[1]!.step}, checkpoint at the stop ${saved}`,
      );

      const p = await client.getJob(plain.id);
      assert.notEqual(p.state, 'failed');
      assert.equal(p.health, null, 'a plain job is never judged hung');
      assert.equal((await client.events(plain.id)).filter((e) => e.kind === 'hung').length, 0);
      await sleep(10);
    },
  );
});
