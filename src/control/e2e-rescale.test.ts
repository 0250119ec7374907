/**
 * End to end: a real server on 4 CPU slots, real trainer processes, real signals. Jobs arrive
 * one after another; the policy (optimus: it re-divides the slots at every arrival and
 * departure) rescales them by checkpoint-restart, and every job completes without losing
 * progress across attempts. The policy decides in a worker thread (`--policy-thread on`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { EventView, JobSummary } from '../client/client.js';
import {
  cleanup,
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

const SAMPLES = 36000;

describe('elastic rescaling on --cpu-slots 4', () => {
  it(
    'rescales jobs by checkpoint-restart as they arrive and leave; all complete with no lost progress',
    { timeout: 90_000 },
    async () => {
      const server = await startServerProcess(data_dir, [
        '--cpu-slots',
        '4',
        '--interval-s',
        '1',
        '--grace-s',
        '5',
        '--policy',
        'optimus',
        // Rounds decided in a worker thread (as on a large cluster): the same rescales must follow.
        '--policy-thread',
        'on',
      ]);
      servers.push(server);
      assert.match(readFileSync(join(data_dir, 'up.log'), 'utf8'), /policy optimus decides in a worker thread/);
      const { client } = server;
      const submit = (name: string) =>
        client.submit({
          name,
          command: [process.execPath, TRAINER, '--samples', String(SAMPLES), '--time-scale', '0.5'],
          workdir: data_dir,
          max_replicas: 4,
        });
      const a = await submit('a');
      await waitFor('a to run on 4 slots', 15_000, async () => {
        const j = await client.getJob(a.id);
        return j.state === 'running' && j.replicas === 4 && j.step > 5;
      });
      const b = await submit('b');
      await waitFor('b to run', 20_000, async () => (await client.getJob(b.id)).state === 'running');
      const c = await submit('c');
      const ids = [a.id, b.id, c.id];
      const done = await waitFor('all jobs to finish', 75_000, async () => {
        const jobs = (await client.listJobs()).filter((j) => ids.includes(j.id));
        return jobs.every((j) => j.state === 'succeeded' || j.state === 'failed') ? jobs : undefined;
      });
      assert.deepEqual(
        done.map((j: JobSummary) => j.state),
        ['succeeded', 'succeeded', 'succeeded'],
      );

      const eventsA: EventView[] = await client.events(a.id);
      const rescales = eventsA.filter((e) => e.kind === 'rescale');
      assert.ok(rescales.length >= 1, `job a was rescaled (events: ${eventsA.map((e) => e.kind).join(',')})`);
      assert.match(
        rescales[0]!.reason,
        /^shrank 4 -> 2 \(optimus: .*frees 2 CPU slots for other jobs.*checkpoint-restart$/,
      );
      assert.equal(rescales[0]!.actor, 'scheduler');
      // After each rescale, every replica of the old attempt exited 143 (checkpointed), then the job was relaunched.
      const afterFirst = eventsA.slice(eventsA.indexOf(rescales[0]!));
      const exits = afterFirst
        .filter((e) => e.kind === 'replica-exited' && e.data.attempt === 0)
        .map((e) => e.data.exit_code);
      assert.deepEqual(exits, [143, 143, 143, 143]);
      const kinds = afterFirst.map((e) => e.kind);
      assert.ok(kinds.indexOf('relaunch') > 0 && kinds.indexOf('launched') > kinds.indexOf('relaunch'));

      let rescaledJobs = 0;
      for (const j of done) {
        const detail = await client.getJob(j.id);
        if (detail.restarts > 0) rescaledJobs++;
        assert.equal(detail.failures, 0);
        assert.ok(detail.samples >= SAMPLES, `${j.name} processed ${detail.samples} samples`);
        // No lost progress: each attempt resumes exactly where the previous one checkpointed.
        const lines = trainerLines(readFileSync(join(data_dir, 'jobs', j.id, 'logs', 'replica-0.log'), 'utf8'));
        const resumed = lines.filter((l) => l.kind === 'resumed');
        assert.deepEqual({ step: resumed[0]!.step, samples: resumed[0]!.samples }, { step: 0, samples: 0 });
        assert.ok(
          resumed.length >= 1 && resumed.length <= detail.restarts + 1,
          `${j.name}: at most one start per attempt`,
        );
        // An attempt stopped before the trainer installed its SIGTERM handler leaves no line and
        // no checkpoint; the next attempt then resumes from the one before.
        let saved = { step: 0, samples: 0 };
        let lastAttempt = -1;
        for (const l of lines) {
          if (l.kind === 'resumed') {
            assert.ok(l.attempt > lastAttempt, `${j.name}: attempts increase`);
            lastAttempt = l.attempt;
            assert.deepEqual(
              { step: l.step, samples: l.samples },
              saved,
              `${j.name}: attempt ${l.attempt} resumes at the last checkpoint`,
            );
          } else if (l.kind === 'checkpointed') {
            assert.equal(l.attempt, lastAttempt);
            saved = { step: l.step, samples: l.samples };
          }
        }
        if (detail.restarts > 0)
          assert.ok(
            lines.some((l) => l.kind === 'checkpointed'),
            `${j.name}: checkpointed at a rescale`,
          );
        const finished = lines.find((l) => l.kind === 'done');
        assert.ok(finished && finished.step === detail.step, `${j.name}: finished at the reported step`);
      }
      assert.ok(rescaledJobs >= 2, `at least two jobs were rescaled (got ${rescaledJobs})`);

      const metrics = await client.metrics();
      assert.match(metrics, /^goodput_jobs\{state="succeeded"\} 3$/m);
      assert.match(metrics, /^goodput_gpus_allocated 0$/m);
      assert.match(metrics, /^goodput_scheduler_round_duration_seconds_count [1-9]\d*$/m);
    },
  );
});
