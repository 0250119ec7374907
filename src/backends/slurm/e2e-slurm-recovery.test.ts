/**
 * End to end against real Slurm daemons (slurmctld + 2 slurmd, 4 fake GPUs each, on this host):
 * what outages and outside actions do to running jobs: a server killed with -9 and restarted,
 * foreign Slurm jobs, a drained node, a manual scancel, slurmctld down during a cancel. Skipped
 * with a message when Slurm is not installed (CI installs slurm-wlm, scripts/test-packages.txt).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { GoodputClient, JobDetail } from '../../client/client.js';
import { killGroup, runCli, sleep, trainerCommand, waitFor } from '../../../test-support/control/harness.js';
import { slurmSuite, untilNoSlurmJobs } from '../../../test-support/slurm/slurm-suite.js';
import { slurmMissing, slurmUpArgs, startSlurmCluster } from './testing/slurm-cluster.js';

const skip = slurmMissing();
describe('goodput up --backend slurm: outages and outside actions (real slurmctld and slurmd)', { skip }, () => {
  const suite = slurmSuite(() => startSlurmCluster());
  // 2 s rounds and 10 s of grace: the waits of these tests were sized for them.
  const upArgs = (...extra: string[]) => slurmUpArgs('optimus', extra, { interval_s: 2, grace_s: 10 });
  const up = async (...extra: string[]) => {
    // Slurm jobs of the previous test may still be completing: the next server must find the
    // cluster empty, and every node back (a failed test leaves the one it drained so).
    await untilNoSlurmJobs(suite.cluster);
    await suite.cluster.resumeNodes();
    return suite.start(upArgs(...extra), { data_dir: suite.fresh() });
  };
  const ended = (client: GoodputClient, id: string, timeout_ms: number) =>
    waitFor(`job ${id} to end`, timeout_ms, async () => {
      const j = await client.getJob(id);
      return ['succeeded', 'failed', 'cancelled'].includes(j.state) ? j : undefined;
    });
  /** Samples squeue every 300 ms; records any job name with two active Slurm jobs at once. */
  const watchQueue = () => {
    const seen: string[] = [];
    let on = true;
    const loop = (async () => {
      while (on) {
        const out = await suite.cluster.cmd('squeue', ['-h', '-o', '%j %i %T']).catch(() => '');
        const ids = new Map<string, Set<string>>();
        for (const [name, id, state] of out
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(' '))) {
          if (!name!.startsWith('goodput-') || !/PENDING|RUNNING|CONFIGURING|COMPLETING/.test(state!)) continue;
          ids.set(name!, (ids.get(name!) ?? new Set()).add(id!.split('+')[0]!));
        }
        for (const [name, set] of ids) if (set.size > 1) seen.push(`${name}: ${[...set].join(',')}`);
        await sleep(300);
      }
    })();
    return async () => {
      on = false;
      await loop;
      return seen;
    };
  };

  it(
    'kill -9 of the server while 3 jobs run: restarted, it re-adopts them, all succeed, never two Slurm jobs per attempt',
    { timeout: 300_000 },
    async () => {
      const s1 = await up();
      const stopWatch = watchQueue();
      const ids: string[] = [];
      for (const name of ['a', 'b', 'c'])
        ids.push(
          (await s1.client.submit({ name, command: trainerCommand(40000), workdir: s1.data_dir, max_replicas: 2 })).id,
        );
      await waitFor('the 3 jobs to run and report', 120_000, async () => {
        const jobs = await Promise.all(ids.map((id) => s1.client.getJob(id)));
        return jobs.every((j) => j.state === 'running' && j.step > 0);
      });
      const before = await Promise.all(ids.map((id) => s1.client.getJob(id)));
      killGroup(s1.pid);
      await sleep(3000);
      const s2 = await suite.start(upArgs('--port', new URL(s1.url).port), { data_dir: s1.data_dir });
      const upLog = readFileSync(join(s1.data_dir, 'up.log'), 'utf8');
      assert.match(upLog, /re-adopted \d+ running replica/, 'the restarted server re-adopted the running Slurm jobs');
      const done: JobDetail[] = [];
      for (const id of ids) done.push(await ended(s2.client, id, 240_000));
      const duplicates = await stopWatch();
      assert.deepEqual(
        done.map((j) => j.state),
        ['succeeded', 'succeeded', 'succeeded'],
        JSON.stringify(await s2.client.events(ids[0]!)),
      );
      assert.deepEqual(duplicates, [], 'squeue never showed two Slurm jobs for one attempt');
      for (const [k, j] of done.entries())
        assert.ok(j.restarts >= before[k]!.restarts && j.failures === 0, `${j.name}: no failure`);
    },
  );

  it(
    'a foreign sbatch --gres=gpu:2 shrinks what Goodput uses; a drained node and a manual scancel are reported and handled',
    { timeout: 300_000 },
    async () => {
      const s = await up();
      const foreign = (
        await suite.cluster.cmd('sbatch', [
          '--parsable',
          '-w',
          'gp2',
          '--gres=gpu:2',
          '-J',
          'foreign',
          '-o',
          '/dev/null',
          '--wrap',
          'sleep 600',
        ])
      ).trim();
      await waitFor('Goodput to see the foreign job', 30_000, async () => {
        const nodes = await s.client.nodes();
        return nodes.find((n) => n.name === 'gp2')?.usable === 2;
      });
      const shown = await runCli(['nodes', '--data-dir', s.data_dir]);
      assert.match(shown.stdout, /gp2: 2\/4 usable \(2 GPU\(s\) held by other Slurm jobs\)/);
      const job = await s.client.submit({
        name: 'wide',
        command: trainerCommand(400000),
        workdir: s.data_dir,
        max_replicas: 8,
      });
      const six = await waitFor('the job to run on the 6 free GPUs', 120_000, async () => {
        const j = await s.client.getJob(job.id);
        return j.state === 'running' && j.current_replicas.length === 6 ? j : undefined;
      });
      assert.equal(
        six.current_replicas.filter((r) => r.node === 'gp2').length,
        2,
        'only the GPUs the foreign job left on gp2',
      );
      await suite.cluster.cmd('scancel', [foreign]);
      await waitFor(
        'the job to grow to 8 once the foreign job ended',
        120_000,
        async () => (await s.client.getJob(job.id)).current_replicas.filter((r) => r.exit_code === null).length === 8,
      );

      await suite.cluster.cmd('scontrol', ['update', 'nodename=gp2', 'state=drain', 'reason=maintenance']);
      const moved = await waitFor('the job to leave the drained node', 120_000, async () => {
        const j = await s.client.getJob(job.id);
        const live = j.current_replicas.filter((r) => r.exit_code === null);
        return j.state === 'running' && live.length === 4 && live.every((r) => r.node === 'gp1') ? j : undefined;
      });
      const drained = (await s.client.events(job.id)).find((e) => e.kind === 'node-unavailable');
      assert.match(drained?.reason ?? '', /node gp2 is drain.*maintenance/);

      // gp2 stays drained until the manual scancel is handled: resumed earlier, Goodput may grow
      // the job back onto it (a restart it requests) at the moment the test cancels the attempt.
      const slurmJob = moved.current_replicas[0]!.launch_id;
      await suite.cluster.cmd('scancel', [slurmJob]);
      const restarted = await waitFor('the job to run again after the manual scancel', 120_000, async () => {
        const j = await s.client.getJob(job.id);
        return j.state === 'running' && j.current_replicas.some((r) => r.launch_id !== slurmJob && r.exit_code === null)
          ? j
          : undefined;
      });
      const exits = (await s.client.events(job.id)).filter(
        (e) => e.kind === 'replica-exited' && e.data.attempt === moved.current_replicas[0]!.attempt,
      );
      assert.ok(
        exits.length > 0 && exits.every((e) => /not requested by Goodput/.test(e.reason)),
        exits.map((e) => e.reason).join('; '),
      );
      assert.equal(restarted.state, 'running');
      await suite.cluster.cmd('scontrol', ['update', 'nodename=gp2', 'state=resume']);

      // A node that goes down under the job: Slurm ends the job (NodeDown); Goodput restarts it
      // from its checkpoint. (ReturnToService=2 brings the emulated node back at once.)
      const spanning = await waitFor('the job to run on both nodes again', 120_000, async () => {
        const j = await s.client.getJob(job.id);
        const live = j.current_replicas.filter((r) => r.exit_code === null);
        const run = join(s.data_dir, 'jobs', job.id, 'run');
        const started = live.every((r) => existsSync(join(run, `attempt-${r.attempt}-rank-${r.rank}.pid`)));
        return j.state === 'running' && new Set(live.map((r) => r.node)).size === 2 && started ? j : undefined;
      });
      const downed = spanning.current_replicas[0]!.launch_id;
      await suite.cluster.cmd('scontrol', ['update', 'nodename=gp2', 'state=down', 'reason=power']);
      await waitFor('the job to run again after the node failure', 120_000, async () => {
        const j = await s.client.getJob(job.id);
        return j.state === 'running' && j.current_replicas.some((r) => r.launch_id !== downed && r.exit_code === null);
      });
      const events = await s.client.events(job.id);
      const lost = events.filter(
        (e) => e.kind === 'replica-exited' && e.data.attempt === spanning.current_replicas[0]!.attempt,
      );
      // Once Slurm's reason is known, every later exit of the attempt carries it, including those of
      // ranks Goodput stopped after the first one came back. (If Goodput saw the node go first, it
      // moved the job itself and says so.)
      const outside = new RegExp(`Slurm job ${downed} ended .*not requested by Goodput`);
      const first = lost.findIndex((e) => outside.test(e.reason));
      const history = events.map((e) => `${e.at} ${e.kind}: ${e.reason}`).join('\n');
      assert.ok(lost.length > 0, history);
      if (first >= 0)
        assert.ok(
          lost.slice(first).every((e) => outside.test(e.reason)),
          history,
        );
      else
        assert.ok(
          events.some((e) => e.kind === 'node-unavailable' && /node gp2 is down/.test(e.reason)),
          history,
        );
      await s.client.cancel(job.id);
    },
  );

  it(
    'a cancel while slurmctld is down reaches Slurm once it is back: the Slurm job ends and its GPUs are free',
    { timeout: 240_000 },
    async () => {
      const s = await up();
      const job = await s.client.submit({
        name: 'orphan',
        command: [process.execPath, '-e', 'setTimeout(() => {}, 600000)'],
        workdir: s.data_dir,
        min_replicas: 2,
        max_replicas: 2,
      });
      const running = await waitFor('the job to run', 120_000, async () => {
        const j = await s.client.getJob(job.id);
        return j.state === 'running' && j.current_replicas.length === 2 ? j : undefined;
      });
      const slurmJob = running.current_replicas[0]!.launch_id;
      await suite.cluster.stopController();
      try {
        assert.equal((await s.client.cancel(job.id)).state, 'cancelled');
        // Past the 10 s grace and Slurm's client retries: neither SIGTERM nor SIGKILL reaches Slurm.
        await sleep(40_000);
      } finally {
        await suite.cluster.startController();
      }
      const listed = async () =>
        (await suite.cluster.cmd('squeue', ['-h', '-o', '%i']))
          .split('\n')
          .some((id) => id.trim().split('+')[0] === slurmJob);
      await waitFor(`Slurm job ${slurmJob} to end`, 90_000, async () => !(await listed()));
      await waitFor('every replica of the cancelled job to have exited', 60_000, async () =>
        (await s.client.getJob(job.id)).current_replicas.every((r) => r.exit_code !== null),
      );
      const nodes = await s.client.nodes();
      assert.ok(
        nodes.every((n) => n.devices.every((d) => !d.busy)),
        JSON.stringify(nodes),
      );
    },
  );
});
