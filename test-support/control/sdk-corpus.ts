/**
 * What the SDK corpus tests (local and Slurm) check once both jobs ended: every stop of a replica
 * whose DataLoader workers run is a checkpoint and exit 143, and no attempt loses progress.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventView, GoodputClient, JobDetail } from '../../src/client/client.js';

/** One attempt's story in a rank-0 log, from the SDK's own lines. */
export interface Attempt {
  resumed_step: number;
  checkpointed_step?: number;
  last_printed_step: number;
}

/** The attempts of a rank-0 log of the corpus scripts, in order. */
export function attempts(log: string): Attempt[] {
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

/** A replica's log of job `id` under the server's data directory. */
export function replicaLog(data_dir: string, id: string, replica: number): string {
  return readFileSync(join(data_dir, 'jobs', id, 'logs', `replica-${replica}.log`), 'utf8');
}

/**
 * Asserts, for the ended jobs `done` (the first one the job that was rescaled): both succeeded
 * without a failed attempt; the first was rescaled by checkpoint-restart; every replica exited
 * 0 or 143 and at least `min_stops` exited 143; no DataLoader worker died; each attempt resumed
 * at the step its predecessor checkpointed, which covers every step that attempt printed.
 */
export async function assertStopsKeptProgress(
  client: GoodputClient,
  data_dir: string,
  done: readonly JobDetail[],
  min_stops = 2,
): Promise<void> {
  const [rescaled] = done;
  assert.deepEqual(
    done.map((j) => j.state),
    done.map(() => 'succeeded'),
    replicaLog(data_dir, rescaled!.id, 0).slice(-3000),
  );
  for (const j of done) assert.equal(j.failures, 0, `${j.name} had no failed attempt`);

  const events: EventView[] = await client.events(rescaled!.id);
  const rescales = events.filter((e) => e.kind === 'rescale');
  assert.ok(rescales.length >= 1, `${rescaled!.name} was rescaled (events: ${events.map((e) => e.kind).join(',')})`);
  for (const e of rescales) assert.match(e.reason, /checkpoint/, 'an SDK job is stopped by checkpoint-restart');

  let stops = 0;
  for (const j of done) {
    const exits = (await client.events(j.id)).filter((e) => e.kind === 'replica-exited').map((e) => e.data.exit_code);
    const dir = join(data_dir, 'jobs', j.id, 'logs');
    const logs = readdirSync(dir)
      .filter((f) => f.startsWith('replica-'))
      .map((f) => readFileSync(join(dir, f), 'utf8'));
    // A stop that hangs shows where: the SDK prints every thread's stack 20 s after the SIGTERM.
    const tails = () => logs.map((log, rank) => `---- replica ${rank} ----\n${log.slice(-6000)}`).join('\n');
    assert.ok(
      exits.every((code) => code === 0 || code === 143),
      `${j.name}: every replica exited 0 or 143, got ${exits.join(',')}\n${tails()}`,
    );
    stops += exits.filter((code) => code === 143).length;
    for (const log of logs)
      assert.doesNotMatch(log, /killed by signal|exited unexpectedly/, `${j.name}: no DataLoader worker died`);
    // No lost progress: each attempt starts at the step its predecessor checkpointed, which
    // is at or after the last step that attempt printed.
    const rank0 = replicaLog(data_dir, j.id, 0);
    const story = attempts(rank0);
    assert.equal(story[0]!.resumed_step, 0);
    for (let i = 1; i < story.length; i++) {
      const before = story[i - 1]!;
      assert.ok(
        before.checkpointed_step !== undefined,
        `${j.name}: attempt ${i - 1} checkpointed before it was stopped:\n${rank0.slice(-4000)}`,
      );
      assert.ok(
        before.checkpointed_step >= before.last_printed_step,
        `${j.name}: checkpoint at ${before.checkpointed_step} covers step ${before.last_printed_step}`,
      );
      assert.equal(
        story[i]!.resumed_step,
        before.checkpointed_step,
        `${j.name}: attempt ${i} resumes at the checkpoint`,
      );
    }
    assert.match(rank0, /^done step=\d+$/m);
  }
  assert.ok(
    stops >= min_stops,
    `at least one stop of a 2-replica attempt exited 143 on every replica (got ${stops} exits 143)`,
  );
}
