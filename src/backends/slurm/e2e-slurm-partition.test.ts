/**
 * Slurm states are data, not failures (issue 47), against real Slurm daemons: a drained
 * partition refuses the relaunch of a running job (sbatch: "Required partition not available")
 * and the job waits `starting` with Slurm's words until the partition is up, then resumes from
 * its checkpoint; a DOWN partition holds the relaunch PENDING (PartitionDown): the job is
 * `starting` with that reason, its GPUs are not counted as allocated and it is never called
 * hung; a workdir sbatch's `--chdir` cannot carry (backslash, double quote, line break) runs
 * there, one missing on the node fails loudly, and environment variables sbatch would read as
 * its own options are refused at submit; a drain stops no running job: a rescale asked for while
 * the partition is drained waits (the same Slurm job runs on) and happens once it is up. One
 * cluster, the cases in sequence (the last on its own server with an elastic policy).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { JobDetail } from '../../client/client.js';
import {
  eventHistory,
  gpusAllocated,
  runCli,
  sleep,
  trainerCommand,
  trainerLines,
  waitFor,
  type ServerProcess,
} from '../../../test-support/control/harness.js';
import { setPartitionState, signalRescale, slurmSuite } from '../../../test-support/slurm/slurm-suite.js';
import { slurmMissing, slurmUpArgs, startSlurmCluster } from './testing/slurm-cluster.js';

// Past any quiet moment of a running trainer on a loaded machine, short enough to wait it out.
const HUNG_TIMEOUT_S = 8;

const skip = slurmMissing();
describe('Slurm partition states and workdirs (real slurmctld and slurmd)', { skip }, () => {
  const suite = slurmSuite(() => startSlurmCluster(), 'goodput-slurm-partition-');
  let s: ServerProcess;
  const scratch = mkdtempSync(join(tmpdir(), 'goodput-slurm-wd-'));
  before(async () => {
    s = await suite.start(slurmUpArgs('fifo', ['--hung-timeout-s', String(HUNG_TIMEOUT_S)]));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const partition = (state: 'UP' | 'DRAIN' | 'DOWN') => setPartitionState(suite.cluster, state);
  const history = (id: string) => eventHistory(s.client, id);
  /** A 2-rank synthetic trainer, running and past its first report (so it has a checkpoint). */
  const runningTrainer = async (name: string): Promise<JobDetail> => {
    const job = await s.client.submit({
      name,
      command: trainerCommand(400000),
      workdir: s.data_dir,
      min_replicas: 2,
      max_replicas: 2,
    });
    return waitFor(`${name} to run and report`, 120_000, async () => {
      const j = await s.client.getJob(job.id);
      return j.state === 'running' && j.step > 0 ? j : undefined;
    });
  };
  const relaunch = (j: JobDetail) => signalRescale(suite.cluster, j);
  /** Runs `body` with the partition in `state`; then brings it back up and cancels `job`, whatever happened. */
  const whilePartition = async (state: 'DRAIN' | 'DOWN', job: JobDetail, body: () => Promise<void>) => {
    await partition(state);
    try {
      await body();
    } finally {
      await partition('UP');
      await s.client.cancel(job.id).catch(() => undefined);
    }
  };
  const allocated = () => gpusAllocated(s.client);
  /** Running again on a new attempt, its rank 0 resumed from the checkpoint of an earlier one. */
  const resumed = async (j: JobDetail) => {
    const again = await waitFor(`${j.name} to run again`, 120_000, async () => {
      const x = await s.client.getJob(j.id);
      return x.state === 'running' &&
        x.current_replicas.some((r) => r.attempt > j.current_replicas[0]!.attempt && r.exit_code === null)
        ? x
        : undefined;
    });
    const log = () => trainerLines(readFileSync(join(s.data_dir, 'jobs', j.id, 'logs', 'replica-0.log'), 'utf8'));
    const line = await waitFor(`${j.name} to resume`, 60_000, async () =>
      log().find((l) => l.kind === 'resumed' && l.attempt === again.current_replicas[0]!.attempt),
    );
    assert.ok(line.step > 0, `resumed from its checkpoint, not from step 0: ${JSON.stringify(line)}`);
    return again;
  };

  it(
    "a drained partition: the relaunch waits with Slurm's words, retried until the partition is up, then resumes from its checkpoint",
    { timeout: 300_000 },
    async () => {
      const a = await runningTrainer('drained');
      const gone = mkdtempSync(join(scratch, 'gone-'));
      await whilePartition('DRAIN', a, async () => {
        await relaunch(a);
        const waiting = await waitFor('the relaunch to wait on the drained partition', 60_000, async () => {
          const j = await s.client.getJob(a.id);
          assert.notEqual(j.state, 'failed', await history(a.id));
          return j.state === 'starting' && /Required partition not available/.test(j.launch_wait ?? '') ? j : undefined;
        });
        assert.equal(waiting.failures, 0, await history(a.id));
        // A job submitted meanwhile waits too; its workdir is gone by the time it launches.
        const c = await s.client.submit({
          name: 'workdir-gone',
          command: ['true'],
          workdir: gone,
          max_replicas: 1,
          max_restarts: 1,
        });
        rmSync(gone, { recursive: true });
        await sleep(4000);
        const still = await s.client.getJob(a.id);
        assert.equal(still.state, 'starting', await history(a.id));
        assert.ok(
          (await s.client.events(a.id)).some(
            (e) =>
              e.kind === 'waiting' &&
              /Slurm refuses new jobs now: Required partition not available \(inactive or drain\)/.test(e.reason),
          ),
          await history(a.id),
        );
        assert.equal((await s.client.getJob(c.id)).state, 'starting');
        assert.equal(await allocated(), 0, 'no GPU of a launch Slurm refused is counted as allocated');
        const show = await runCli(['show', a.id, '--data-dir', s.data_dir]);
        assert.match(show.stdout, /waits: Slurm refuses new jobs now: Required partition not available/);
        await partition('UP');
        await resumed(a);
        const failed = await waitFor('the job without its workdir to fail', 120_000, async () => {
          const j = await s.client.getJob(c.id);
          return j.state === 'failed' || j.state === 'succeeded' ? j : undefined;
        });
        assert.equal(failed.state, 'failed', 'a workdir the node cannot enter never runs elsewhere');
        assert.match(
          readFileSync(join(s.data_dir, 'jobs', c.id, 'logs', 'replica-0.log'), 'utf8'),
          /goodput: cannot enter the workdir .*gone-.* on node gp\d/,
        );
      });
    },
  );

  it(
    'a DOWN partition: the PENDING relaunch is starting with PartitionDown, holds no GPU, is never hung, and resumes once the partition is up',
    { timeout: 300_000 },
    async () => {
      const b = await runningTrainer('down');
      await whilePartition('DOWN', b, async () => {
        await relaunch(b);
        await waitFor('the relaunch to wait PENDING (PartitionDown)', 60_000, async () => {
          const j = await s.client.getJob(b.id);
          return j.state === 'starting' && /PENDING \(PartitionDown/.test(j.launch_wait ?? '') ? j : undefined;
        });
        const pending = (await suite.cluster.cmd('squeue', ['-h', '-o', '%T %r'])).trim();
        assert.match(pending, /^PENDING PartitionDown$/m, 'Slurm holds the job');
        assert.equal(await allocated(), 0, 'the GPUs of a PENDING Slurm job are not counted as allocated');
        // A job submitted meanwhile is held too; an operator's scancel of its PENDING Slurm job is
        // recorded (with Slurm's reason) and relaunched; Goodput's cancel ends the next one in Slurm.
        const d = await s.client.submit({
          name: 'down-new',
          command: ['true'],
          workdir: s.data_dir,
          max_replicas: 1,
          max_restarts: 5,
        });
        const slurmJobOf = async (id: string) =>
          /^(\d+) /m.exec(
            (await suite.cluster.cmd('squeue', ['-h', '-o', '%i %j']))
              .split('\n')
              .filter((l) => l.includes(`-${id}-`))
              .join('\n'),
          )?.[1];
        const first = await waitFor('the new job to be held PENDING', 60_000, async () =>
          (await s.client.getJob(d.id)).launch_wait?.includes('PartitionDown') ? slurmJobOf(d.id) : undefined,
        );
        await suite.cluster.cmd('scancel', [first]);
        const second = await waitFor('the new job to be submitted again', 60_000, async () => {
          const id = await slurmJobOf(d.id);
          return id !== undefined && id !== first && (await s.client.getJob(d.id)).state === 'starting'
            ? id
            : undefined;
        });
        assert.ok(
          (await s.client.events(d.id)).some(
            (e) =>
              e.kind === 'replica-exited' &&
              new RegExp(`Slurm job ${first} ended CANCELLED.*not requested by Goodput`).test(e.reason),
          ),
          await history(d.id),
        );
        await s.client.cancel(d.id);
        await waitFor(
          `Slurm job ${second} of the cancelled job to end`,
          30_000,
          async () => (await slurmJobOf(d.id)) === undefined,
        );
        // Past the hung timeout (and a watch interval): a job Slurm holds is not silent, it has not started.
        await sleep((HUNG_TIMEOUT_S + 4) * 1000);
        const held = await s.client.getJob(b.id);
        const events = await s.client.events(b.id);
        assert.equal(held.state, 'starting', await history(b.id));
        assert.equal(held.failures, 0, await history(b.id));
        assert.ok(!events.some((e) => e.kind === 'hung'), await history(b.id));
        assert.ok(
          events.some(
            (e) =>
              e.kind === 'waiting' &&
              /launched, not running yet: Slurm job \d+ is PENDING \(PartitionDown: the partition is down/.test(
                e.reason,
              ),
          ),
          await history(b.id),
        );
        await partition('UP');
        const again = await resumed(b);
        assert.equal(again.failures, 0, await history(b.id));
        assert.equal(await allocated(), 2);
      });
    },
  );

  it(
    'workdirs with a backslash, a double quote or a line break run there; Slurm input variables are refused at submit',
    { timeout: 240_000 },
    async () => {
      const dirs = ['back\\slash', 'double"quote', 'line\nbreak'].map((name) => join(scratch, name));
      for (const d of dirs) mkdirSync(d);
      const cwd = "require('fs').writeFileSync(process.env.GOODPUT_CHECKPOINT_DIR + '/cwd', process.cwd())";
      const ids: string[] = [];
      for (const [k, workdir] of dirs.entries())
        ids.push(
          (
            await s.client.submit({
              name: `wd-${k}`,
              command: [process.execPath, '-e', cwd],
              workdir,
              max_replicas: 1,
              max_restarts: 0,
            })
          ).id,
        );
      for (const [k, id] of ids.entries()) {
        const j = await waitFor(`wd-${k} to end`, 120_000, async () => {
          const x = await s.client.getJob(id);
          return ['succeeded', 'failed', 'cancelled'].includes(x.state) ? x : undefined;
        });
        assert.equal(j.state, 'succeeded', await history(id));
        assert.equal(
          readFileSync(join(s.data_dir, 'jobs', id, 'checkpoint', 'cwd'), 'utf8'),
          dirs[k],
          'the program ran in its workdir, not in a fallback directory',
        );
      }
      await assert.rejects(
        s.client.submit({
          name: 'sbatch-env',
          command: ['true'],
          workdir: scratch,
          env: { SBATCH_PARTITION: 'other' },
        }),
        (e: unknown) => {
          const err = e as { code?: string; message: string };
          return (
            err.code === 'E_SPEC' &&
            /env: SBATCH_PARTITION: on the Slurm backend sbatch and srun read/.test(err.message)
          );
        },
      );
    },
  );

  it(
    'a drain stops no running job: the rescale a new job asks for waits until the partition is up, then happens',
    { timeout: 300_000 },
    async () => {
      // An elastic policy on its own server (the same cluster): a second job makes it shrink the first.
      const e = await suite.start(slurmUpArgs('optimus'), { data_dir: suite.fresh() });
      const trainer = (name: string, max_replicas: number) =>
        e.client.submit({
          name,
          command: trainerCommand(4000000),
          workdir: e.data_dir,
          min_replicas: 1,
          max_replicas,
        });
      const events = (id: string) => eventHistory(e.client, id);
      const attemptOf = (j: JobDetail) => j.current_replicas.map((r) => `${r.attempt}/${r.launch_id}`).join(',');
      try {
        const a = await trainer('keep-a', 8);
        const wide = await waitFor('keep-a to run on all 8 GPUs and report', 120_000, async () => {
          const j = await e.client.getJob(a.id);
          return j.state === 'running' && j.replicas === 8 && j.step > 0 ? j : undefined;
        });
        // Rescales before the drain (e.g. a first start on fewer GPUs, then 8) are not the point.
        const drained_at = new Date().toISOString();
        await partition('DRAIN');
        const b = await trainer('keep-b', 4);
        // A round decided on keep-b: keep-a kept (the fix) or stopped for the rescale (before it).
        await waitFor('a round to decide on keep-b', 60_000, async () => {
          const keptOrStopped =
            (await e.client.getJob(a.id)).state !== 'running' ||
            (await e.client.events(a.id)).some((x) => x.reason.startsWith('kept on'));
          return keptOrStopped ? true : undefined;
        });
        // Several rounds while drained: the same attempt (same Slurm job) runs, nothing stopped it.
        await sleep(8000);
        const still = await e.client.getJob(a.id);
        assert.equal(still.state, 'running', await events(a.id));
        assert.equal(attemptOf(still), attemptOf(wide), 'the same attempt and Slurm job run while drained');
        assert.ok(still.step > wide.step, 'it kept training');
        const stops = (await e.client.events(a.id)).filter((x) => x.kind === 'rescale' && x.at >= drained_at);
        assert.deepEqual(stops, [], await events(a.id));
        const kept = (await e.client.events(a.id)).filter(
          (x) => x.kind === 'waiting' && x.reason.startsWith('kept on'),
        );
        assert.equal(kept.length, 1, `one event per drain: ${await events(a.id)}`);
        assert.match(
          kept[0]!.reason,
          new RegExp(
            `^kept on 8 GPUs: Slurm partition ${suite.cluster.partition} is draining .*; the rescale to \\d+ waits until it accepts jobs$`,
          ),
        );
        assert.equal((await e.client.getJob(b.id)).state, 'queued', 'no GPU of a kept job is given to another');
        await partition('UP');
        const shrunk = await waitFor('keep-a to be rescaled once the partition is up', 120_000, async () => {
          const j = await e.client.getJob(a.id);
          return j.state === 'running' && j.replicas < 8 && attemptOf(j) !== attemptOf(wide) ? j : undefined;
        });
        assert.equal(shrunk.failures, 0, await events(a.id));
        assert.ok(
          (await e.client.events(a.id)).some((x) => x.kind === 'rescale' && /^shrank 8 -> /.test(x.reason)),
          await events(a.id),
        );
        await waitFor('keep-b to run', 120_000, async () => (await e.client.getJob(b.id)).state === 'running');
      } finally {
        await partition('UP');
        for (const j of await e.client.listJobs()) await e.client.cancel(j.id).catch(() => undefined);
        await sleep(3000);
      }
    },
  );
});
