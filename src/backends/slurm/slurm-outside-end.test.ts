/**
 * A rank killed by a signal Goodput did not send (real slurmctld and slurmd): its exit file can
 * land before Slurm's job list says why the job is ending (an operator's scancel, a node set
 * down). The backend holds the attempt's exits a few seconds for the list to say it, so the end is
 * not read as the program's own checkpointed stop, and reports them anyway once the wait is over.
 * The race is made deterministic here by killing one rank's program by hand: Slurm still lists
 * the job as running, exactly as in the window before it ends a job itself. The controller's
 * periodic `probe` must not record such an exit first either (it has no reason to give). An
 * scancel'd job is listed COMPLETING, without a reason, until its slowest rank is dead: the hold
 * lasts while it is.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LaunchRequest, ReplicaExit } from '../backend.js';
import { runFileBase } from '../run-files.js';
import { SlurmBackend } from './slurm-backend.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './testing/slurm-cluster.js';

describe('Slurm backend: a rank killed by a signal Goodput did not send', { skip: slurmMissing() }, () => {
  let cluster: SlurmCluster;
  let root: string;
  let backend: SlurmBackend;
  const exits: (ReplicaExit & { at_ms: number })[] = [];
  // Replicas are detached by design; keep this test's event loop alive while waiting on them.
  const keepAlive = setInterval(() => {}, 1000);
  before(async () => {
    cluster = await startSlurmCluster();
    root = mkdtempSync(join(tmpdir(), 'goodput-outside-'));
    backend = new SlurmBackend({ name_prefix: 'goodput-outside', env: cluster.env, poll_ms: 250 });
    await backend.refresh();
    backend.onExit((e) => exits.push({ ...e, at_ms: Date.now() }));
  });
  after(async () => {
    clearInterval(keepAlive);
    backend?.close();
    await cluster?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const until = async <T>(what: string, f: () => T | undefined, timeout_ms = 60_000): Promise<T> => {
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      const v = f();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** Two ranks of `sleep 600` on the first node; resolves with the request and the Slurm job id once both run. */
  const launchTwo = async (
    job_id: string,
    command = ['sleep', '600'],
  ): Promise<{ req: LaunchRequest; slurm_id: string }> => {
    const req: LaunchRequest = {
      job_id,
      attempt: 0,
      command,
      workdir: root,
      env: {},
      devices: [0, 1],
      nodes: [0, 0],
      num_nodes: 1,
      api_url: 'http://127.0.0.1:1',
      token: 'tok',
      job_dir: join(root, job_id),
    };
    const [first] = await backend.launch(req);
    await until('both ranks to run', () =>
      [0, 1].every((r) => existsSync(runFileBase(req.job_dir, 0, r) + '.pid')) ? true : undefined,
    );
    return { req, slurm_id: first!.launch_id };
  };
  /** Kills rank `rank`'s program with SIGTERM, as slurmd does to the tasks of a job it ends; resolves once its exit file is written. */
  const killRank = async (req: LaunchRequest, rank: number): Promise<number> => {
    const pid = Number(
      readFileSync(runFileBase(req.job_dir, 0, rank) + '.pid', 'utf8')
        .trim()
        .split(' ')[1],
    );
    process.kill(pid, 'SIGTERM');
    await until('the exit file', () => (existsSync(runFileBase(req.job_dir, 0, rank) + '.exit') ? true : undefined));
    return Date.now();
  };
  const of = (job_id: string) => exits.filter((e) => e.job_id === job_id);

  it(
    'an scancel moments after the first rank died is the reason given for every exit, the first included',
    { timeout: 120_000 },
    async () => {
      const { req, slurm_id } = await launchTwo('cancelled');
      await killRank(req, 1);
      // The backend polls every 250 ms: it sees rank 1's exit file while Slurm still lists the job running.
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(of('cancelled'), [], 'held while Slurm does not say why');
      const rank1 = {
        job_id: 'cancelled',
        attempt: 0,
        rank: 1,
        node: 'gp1',
        launch_id: slurm_id,
        pid: 0,
        proc_start: '',
        job_dir: req.job_dir,
      };
      assert.equal(
        backend.probe(rank1),
        'alive',
        "the controller's periodic probe does not record it either (it would without the reason)",
      );
      await cluster.cmd('scancel', [slurm_id]);
      await until('both exits', () => (of('cancelled').length === 2 ? true : undefined));
      for (const e of of('cancelled')) {
        assert.match(
          e.detail ?? '',
          new RegExp(`Slurm job ${slurm_id} ended CANCELLED.*not requested by Goodput`),
          `rank ${e.rank}: ${JSON.stringify(e)}`,
        );
      }
      assert.equal(of('cancelled').find((e) => e.rank === 1)?.exit_code, 143);
    },
  );

  it(
    "an scancel whose slowest rank outlives the wait (it ignores SIGTERM until Slurm's SIGKILL) is still the reason given",
    { timeout: 120_000 },
    async () => {
      // The test cluster's KillWait is 5 s: Slurm lists the job COMPLETING, with no reason, for
      // about 7 s after the scancel, longer than the 5 s a signalled exit is held otherwise.
      const { slurm_id } = await launchTwo('slow-rank', [
        'bash',
        '-c',
        'if [ "$RANK" = 1 ]; then trap "" TERM; fi; exec sleep 600',
      ]);
      const cancelled_ms = Date.now();
      await cluster.cmd('scancel', [slurm_id]);
      await until('both exits', () => (of('slow-rank').length === 2 ? true : undefined));
      const rank0 = of('slow-rank').find((e) => e.rank === 0)!;
      assert.equal(rank0.exit_code, 143, 'rank 0 left on SIGTERM');
      assert.ok(
        rank0.at_ms - cancelled_ms >= 5000,
        `rank 0 held until Slurm said why (${rank0.at_ms - cancelled_ms} ms)`,
      );
      for (const e of of('slow-rank'))
        assert.match(
          e.detail ?? '',
          new RegExp(`Slurm job ${slurm_id} ended CANCELLED.*not requested by Goodput`),
          `rank ${e.rank}: ${JSON.stringify(e)}`,
        );
    },
  );

  it(
    'a rank killed by hand while the job runs on is reported after the wait, without a reason',
    { timeout: 120_000 },
    async () => {
      const { req, slurm_id } = await launchTwo('by-hand');
      const killed_ms = await killRank(req, 1);
      const exit = await until('rank 1 exit', () => of('by-hand').find((e) => e.rank === 1), 30_000);
      assert.equal(exit.exit_code, 143);
      assert.equal(exit.detail, undefined, 'nothing outside Goodput ended the Slurm job');
      const waited_ms = exit.at_ms - killed_ms;
      assert.ok(
        waited_ms >= 4000 && waited_ms < 15_000,
        `reported ${waited_ms} ms after the kill (held about 5 s, not for good)`,
      );
      assert.equal(of('by-hand').length, 1, 'rank 0 still runs');
      // Goodput's own stop of the rest is reported at once, with no outside reason.
      backend.signal(
        {
          job_id: 'by-hand',
          attempt: 0,
          rank: 0,
          node: 'gp1',
          launch_id: slurm_id,
          pid: 0,
          proc_start: '',
          job_dir: req.job_dir,
        },
        'SIGKILL',
      );
      const rest = await until('rank 0 exit after the stop', () => of('by-hand').find((e) => e.rank === 0));
      assert.equal(rest.detail, undefined);
    },
  );
});
