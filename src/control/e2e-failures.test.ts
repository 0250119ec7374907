/**
 * End to end failure handling against a real server and real processes: a command that exits at
 * once ends `failed` with its reason and log tail; fifty of them in a row leave no device held and
 * no job stuck (every exit is seen); an infeasible job is refused at submit; `logs -f` of a failed
 * job exits non-zero; a report to an ended job is refused with 409 and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HttpError, type GoodputClient, type JobDetail } from '../client/client.js';
import { jobToken } from './tokens.js';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { readFileSync } from 'node:fs';
import { pythonWith } from '../../test-support/control/python.js';
import { join } from 'node:path';
import { measuredStepFixture } from '../goodput/testing/perf-fixture.js';

const data_dir = tempDataDir();
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));
let server: ServerProcess;
const dd = () => ['--data-dir', data_dir];
const FINAL = ['succeeded', 'failed', 'cancelled'];

const finished = (client: GoodputClient, id: string, timeout_ms: number): Promise<JobDetail> =>
  waitFor(`job ${id} to finish`, timeout_ms, async () => {
    const j = await client.getJob(id);
    return FINAL.includes(j.state) ? j : undefined;
  });

describe('failure handling against a live server', () => {
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
    ]);
    servers.push(server);
  });

  it(
    'ends a command that exits at once (127) failed within seconds, with the reason and the log tail',
    { timeout: 60_000 },
    async () => {
      const t0 = Date.now();
      const job = await server.client.submit({ name: 'missing', command: ['./nonexistent.sh'], workdir: data_dir });
      const done = await finished(server.client, job.id, 30_000);
      assert.equal(done.state, 'failed');
      assert.ok(Date.now() - t0 < 20_000, `failed after ${Date.now() - t0} ms`);
      assert.match(done.reason, /exit code 127/);
      assert.ok(done.restarts <= 1, `not retried blindly (restarts ${done.restarts})`);
      assert.equal(done.failures, done.restarts + 1, 'every failed attempt counts');
      const show = await runCli(['show', job.id, ...dd()]);
      assert.equal(show.status, 0, show.stderr);
      assert.match(show.stdout, /state\s+failed: .*exit code 127/);
      assert.match(show.stdout, /nonexistent\.sh/, 'the log tail names the missing file');
      const follow = await runCli(['logs', job.id, '-f', ...dd()]);
      assert.notEqual(follow.status, 0, 'logs -f of a failed job exits non-zero');
      assert.match(follow.stderr, /failed/);
    },
  );

  it(
    'says what to do when the log shows a known mistake: here, an interpreter without the module',
    { timeout: 60_000 },
    async () => {
      const python = pythonWith(['os']);
      assert.ok(python, 'a python3 to run');
      const job = await server.client.submit({
        name: 'no-module',
        command: [python, '-c', 'import goodput_no_such_module'],
        workdir: data_dir,
        max_restarts: 0,
      });
      const done = await finished(server.client, job.id, 30_000);
      assert.equal(done.state, 'failed');
      assert.match(
        done.reason,
        /exit code 1.*; the Python that ran it has no module 'goodput_no_such_module': run the job with one that has it/,
      );
      const show = await runCli(['show', job.id, ...dd()]);
      assert.match(show.stdout, /state\s+failed: .*has no module 'goodput_no_such_module'/);
      assert.match(show.stdout, /ModuleNotFoundError/, 'the log tail is still shown');
    },
  );

  it(
    'sees every exit: 50 instant failures in a row leave no device held and no job stuck',
    { timeout: 240_000 },
    async () => {
      // Submitted all at once: the server is busy answering while replicas start and exit, which
      // is when an exit that ends before its listener is attached would be lost.
      const submitted = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          server.client.submit({
            name: `gone-${i}`,
            command: ['./nonexistent.sh'],
            workdir: data_dir,
            max_restarts: 1,
          }),
        ),
      );
      const ids = submitted.map((j) => j.id);
      for (const id of ids) {
        const j = await finished(server.client, id, 60_000).catch(async (error: unknown) => {
          const stuck = await server.client.getJob(id);
          throw new Error(
            `${(error as Error).message}: ${stuck.state} (${stuck.reason}), replicas ${JSON.stringify(stuck.current_replicas)}`,
          );
        });
        assert.equal(j.state, 'failed', `${id}: ${j.reason}`);
        assert.ok(
          j.current_replicas.every((r) => r.exit_code === 127),
          `${id}: every exit recorded`,
        );
      }
      const nodes = await waitFor('every device to be free', 10_000, async () => {
        const n = await server.client.nodes();
        return n[0]!.devices.every((d) => d.job === null) ? n : undefined;
      });
      assert.equal(nodes[0]!.devices.length, 2);
      // The devices really are free: a new job starts and finishes.
      const ok = await server.client.submit({
        name: 'after',
        command: [process.execPath, '-e', 'process.exit(0)'],
        workdir: data_dir,
      });
      assert.equal((await finished(server.client, ok.id, 20_000)).state, 'succeeded');
    },
  );

  it('refuses at submit a job that needs more replicas than the cluster has', async () => {
    const r = await runCli([
      'submit',
      '--min-replicas',
      '8',
      '--max-replicas',
      '8',
      ...dd(),
      '--',
      process.execPath,
      '-e',
      '0',
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^goodput: error\[E_INFEASIBLE\]: .*8 replicas.*2 CPU slot/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    await assert.rejects(
      server.client.submit({ name: 'big', command: ['true'], workdir: data_dir, min_replicas: 3, max_replicas: 4 }),
      (e: unknown) => e instanceof HttpError && e.status === 422 && e.code === 'E_INFEASIBLE',
    );
    assert.equal((await server.client.listJobs()).filter((j) => j.name === 'big').length, 0, 'nothing stored');
  });

  it('answers 409 to a report for a cancelled job and leaves the job unchanged', { timeout: 30_000 }, async () => {
    const script = "process.on('SIGTERM', () => process.exit(143)); setInterval(() => {}, 1000)";
    const job = await server.client.submit({
      name: 'to-cancel',
      command: [process.execPath, '-e', script],
      workdir: data_dir,
    });
    await waitFor('the job to run', 15_000, async () => (await server.client.getJob(job.id)).state === 'running');
    await server.client.cancel(job.id);
    const before = await server.client.getJob(job.id);
    const secret = readFileSync(join(data_dir, 'secret'), 'utf8').trim();
    const m = measuredStepFixture({ time_s: 1, step: 7, samples: 224 });
    const res = await fetch(`${server.url}/v1/jobs/${job.id}/reports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jobToken(secret, job.id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ attempt: 0, reports: [m] }),
    });
    assert.equal(res.status, 409);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'E_CONFLICT');
    const after = await server.client.getJob(job.id);
    assert.equal(after.state, 'cancelled');
    assert.equal(after.step, before.step);
    assert.equal(after.samples, before.samples);
    assert.equal((await server.client.reports(job.id)).length, 0, 'no measurement stored');
  });
});
