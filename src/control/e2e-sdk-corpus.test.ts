/**
 * End to end with outside-style SDK scripts (test-support/corpus/): an AdaptDL-style CIFAR-like
 * script whose loaders run two worker processes, and a script whose loader keeps two persistent
 * workers, under a real `goodput up` on 2 CPU slots. The second job's arrival makes the policy
 * shrink the first by checkpoint-restart (and grow it back when the second ends): each stop
 * SIGTERMs replicas whose DataLoader workers are running. Every stop must end in exit 143 with
 * a checkpoint, every attempt resume at the step its predecessor checkpointed (no lost progress),
 * and both jobs succeed without failures. Skipped, saying why, without a Python that has torch.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { EventView } from '../client/client.js';
import { cleanup, startServerProcess, tempDataDir, waitFor, type ServerProcess } from '../../test-support/control/harness.js';
import { packagePath } from '../util/package-root.js';
import { noPython, pythonWith } from '../../test-support/control/python.js';

const python = pythonWith(['torch']);
const skip = python ? undefined : noPython(['torch']);
const CIFAR = packagePath('test-support', 'corpus', 'adaptdl_style_cifar.py');
const PERSISTENT = packagePath('test-support', 'corpus', 'sdk_persistent_workers.py');

/** One attempt's story in a rank-0 log, from the SDK's own lines. */
interface Attempt {
  resumed_step: number;
  checkpointed_step?: number;
  last_printed_step: number;
}

function attempts(log: string): Attempt[] {
  const out: Attempt[] = [];
  for (const line of log.split('\n')) {
    const start = /^start step=(\d+) attempt=(\d+)/.exec(line);
    const stopped = /^goodput: stop requested \(SIGTERM\); checkpointed step (\d+)/.exec(line);
    const printed = /^epoch=\d+ step=(\d+)/.exec(line);
    if (start) out.push({ resumed_step: Number(start[1]), last_printed_step: Number(start[1]) });
    else if (stopped && out.length > 0) out[out.length - 1]!.checkpointed_step = Number(stopped[1]);
    else if (printed && out.length > 0) out[out.length - 1]!.last_printed_step = Number(printed[1]);
  }
  return out;
}

describe('outside-style SDK scripts with DataLoader workers, rescaled under goodput up', { skip }, () => {
  const data_dir = tempDataDir('goodput-sdk-corpus-');
  const servers: ServerProcess[] = [];
  after(() => cleanup(data_dir, servers));

  // Known defect, open: about one run in two on this 2-core machine, a stop of the 2-replica
  // attempt hangs until the grace period ends (both replicas SIGKILLed, exit 137). Skipped until
  // fixed; GOODPUT_RUN_KNOWN_FLAKY=1 runs it.
  const flaky = process.env.GOODPUT_RUN_KNOWN_FLAKY === '1' ? undefined : 'known defect: a 2-replica stop sometimes hangs until SIGKILL (set GOODPUT_RUN_KNOWN_FLAKY=1 to run)';
  it('stops with workers running exit 143, resume where they stopped, and both jobs succeed', { timeout: 300_000, skip: flaky }, async () => {
    const server = await startServerProcess(data_dir, ['--cpu-slots', '2', '--interval-s', '1', '--grace-s', '30', '--policy', 'optimus']);
    servers.push(server);
    const { client } = server;
    const workdir = packagePath();
    const cifar = await client.submit({ name: 'cifar', command: [python!, CIFAR, '--epochs', '6', '--train-size', '3000'], workdir, max_replicas: 2 });
    await waitFor('cifar to train on 2 replicas', 90_000, async () => {
      const j = await client.getJob(cifar.id);
      return j.state === 'running' && j.replicas === 2 && j.step > 10;
    });
    const persistent = await client.submit({ name: 'persistent', command: [python!, PERSISTENT, '--epochs', '6', '--samples', '16384'], workdir, max_replicas: 2 });
    const ids = [cifar.id, persistent.id];
    const done = await waitFor('both jobs to end', 240_000, async () => {
      const jobs = await Promise.all(ids.map((id) => client.getJob(id)));
      return jobs.every((j) => ['succeeded', 'failed', 'cancelled'].includes(j.state)) ? jobs : undefined;
    });
    const logOf = (id: string, replica: number): string => readFileSync(join(data_dir, 'jobs', id, 'logs', `replica-${replica}.log`), 'utf8');
    assert.deepEqual(done.map((j) => j.state), ['succeeded', 'succeeded'], logOf(cifar.id, 0).slice(-3000));
    for (const j of done) assert.equal(j.failures, 0, `${j.name} had no failed attempt`);

    const events: EventView[] = await client.events(cifar.id);
    const rescales = events.filter((e) => e.kind === 'rescale');
    assert.ok(rescales.length >= 1, `cifar was rescaled (events: ${events.map((e) => e.kind).join(',')})`);
    for (const e of rescales) assert.match(e.reason, /checkpoint/, 'an SDK job is stopped by checkpoint-restart');

    let stops = 0;
    for (const j of done) {
      const exits = (await client.events(j.id)).filter((e) => e.kind === 'replica-exited').map((e) => e.data.exit_code);
      assert.ok(exits.every((code) => code === 0 || code === 143), `${j.name}: every replica exited 0 or 143, got ${exits.join(',')}`);
      stops += exits.filter((code) => code === 143).length;
      const logs = readdirSync(join(data_dir, 'jobs', j.id, 'logs')).filter((f) => f.startsWith('replica-')).map((f) => readFileSync(join(data_dir, 'jobs', j.id, 'logs', f), 'utf8'));
      for (const log of logs) assert.doesNotMatch(log, /killed by signal|exited unexpectedly/, `${j.name}: no DataLoader worker died`);
      // No lost progress: each attempt starts at the step its predecessor checkpointed, which
      // is at or after the last step that attempt printed.
      const story = attempts(logOf(j.id, 0));
      assert.equal(story[0]!.resumed_step, 0);
      for (let i = 1; i < story.length; i++) {
        const before = story[i - 1]!;
        assert.ok(before.checkpointed_step !== undefined, `${j.name}: attempt ${i - 1} checkpointed before it was stopped`);
        assert.ok(before.checkpointed_step >= before.last_printed_step, `${j.name}: checkpoint at ${before.checkpointed_step} covers step ${before.last_printed_step}`);
        assert.equal(story[i]!.resumed_step, before.checkpointed_step, `${j.name}: attempt ${i} resumes at the checkpoint`);
      }
      assert.match(logOf(j.id, 0), /^done step=\d+$/m);
    }
    assert.ok(stops >= 2, `at least one stop of a 2-replica attempt exited 143 on every replica (got ${stops} exits 143)`);
  });
});
