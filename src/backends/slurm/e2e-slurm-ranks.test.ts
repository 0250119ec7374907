/**
 * End to end, the hang path on real Slurm daemons (the test cluster: 2 nodes of 4 fake GPUs) with
 * 3 gloo ranks of real torch through the SDK: rank 1 blocks in a collective the other ranks
 * skipped. The `rank-hung` event names it within 60 s with the Python stacks of every rank (asked
 * through `scancel --signal=23` and the task wrapper, not by pid: the server need not see the
 * node's processes), its process facts as read on its node and its last log line; its whole node
 * is drained (Slurm picks the GPUs within a node) and the job runs again from its checkpoint on
 * the other node. A plain job (no SDK) gets its process facts in `goodput doctor <job>` the same
 * way, and the ask does not end it. Skipped with a message when Slurm or torch is missing.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { JobDetail } from '../../client/client.js';
import { runCli, sleep, waitFor, type ServerProcess } from '../../../test-support/control/harness.js';
import { rankFaultsJob, untilRanksReport } from '../../../test-support/ranks/rank-scenarios.js';
import { pythonOnSlurm, slurmSuite } from '../../../test-support/slurm/slurm-suite.js';
import { slurmUpArgs, startSlurmCluster } from './testing/slurm-cluster.js';

const { python, skip } = pythonOnSlurm(['torch']);

describe('a hung rank on Slurm (torch, gloo, 3 ranks)', { skip }, () => {
  const suite = slurmSuite(() => startSlurmCluster(), 'goodput-slurm-ranks-');
  const { data_dir } = suite;
  let server: ServerProcess;
  before(async () => {
    server = await suite.start(slurmUpArgs('fifo'));
  });

  it('reads a plain job process facts on its node, and the ask leaves it running', { timeout: 120_000 }, async () => {
    const { client } = server;
    const submitted = await client.submit({
      name: 'plain',
      command: ['/bin/sh', '-c', 'echo plain started; exec sleep 300'],
      workdir: data_dir,
      min_replicas: 1,
      max_replicas: 1,
    });
    await waitFor('the plain job to run', 60_000, async () =>
      (await client.getJob(submitted.id)).state === 'running' ? true : undefined,
    );
    await sleep(2000);
    const doctor = await runCli(['doctor', submitted.id, '--data-dir', data_dir]);
    assert.match(
      doctor.stdout,
      /replica 0 {2}S \(sleeping\), [\d.]+ CPU-s; last log line: plain started/,
      doctor.stdout,
    );
    await sleep(1000);
    const j = await client.getJob(submitted.id);
    assert.equal(j.state, 'running');
    assert.ok(j.current_replicas.every((r) => r.exit_code === null));
    await client.cancel(submitted.id);
  });

  it(
    'names the rank blocked in a skipped collective with stacks and facts, drains its node, resumes elsewhere',
    {
      timeout: 400_000,
    },
    async () => {
      const { client } = server;
      const cli = ['--data-dir', data_dir];
      const args = ['--hang-rank', '1', '--hang-kind', 'collective', '--hang-after-s', '15'];
      const submitted = await client.submit(rankFaultsJob('slurm-ranks', python!, data_dir, 3, args));
      const fault = join(data_dir, 'jobs', submitted.id, 'checkpoint', 'fault-at');
      await untilRanksReport(client, submitted.id, 3, 240_000);
      // Before the hang: every replica's facts, read on its node by the task wrapper.
      const doctor = await runCli(['doctor', submitted.id, ...cli]);
      assert.match(
        doctor.stdout,
        /replica 1 {2}[RS] \((running|sleeping)\), [\d.]+ CPU-s; last log line: /,
        doctor.stdout,
      );
      const first: JobDetail = await client.getJob(submitted.id);
      const node = first.current_replicas.find((r) => r.rank === 1)!.node;

      const hung_at_ms = await waitFor('rank 1 to hang', 120_000, async () =>
        existsSync(fault) ? Number(readFileSync(fault, 'utf8').split(' ')[0]) * 1000 : undefined,
      );
      const hung = await waitFor('the rank-hung event', 75_000, async () =>
        (await client.events(submitted.id)).find((e) => e.kind === 'rank-hung'),
      );
      assert.ok(Date.now() - hung_at_ms <= 60_000, `hang named after ${(Date.now() - hung_at_ms) / 1000} s`);
      assert.equal(hung.data.rank, 1);
      assert.equal(hung.data.evidence, 'outside-step');
      assert.match(String((hung.data.process as { state: string } | null)?.state), /^[RS] /, JSON.stringify(hung.data));
      assert.match(String(hung.data.last_log_line), /hang: collective/);
      // Every rank answered: the hung one waits in the side group's all_reduce, called from hang().
      const stacks = hung.data.stacks as Record<string, string>;
      assert.match(stacks['1'] ?? '', /in hang\b/, JSON.stringify(Object.keys(stacks)));
      assert.match(stacks['0'] ?? '', /File /);
      assert.match(hung.reason, new RegExp(`without node ${node} \\(drained`));
      const mark = (await client.events(submitted.id)).find((e) => e.kind === 'device-marked')!;
      assert.deepEqual([mark.data.node, mark.data.device], [node, null]);

      const again = await waitFor('the job to run again on the other node', 150_000, async () => {
        const j = await client.getJob(submitted.id);
        const live = j.current_replicas.filter((r) => r.attempt > 0 && r.exit_code === null);
        return j.state === 'running' && live.length === 3 && j.step > first.step ? live : undefined;
      });
      // Fails without the requeue in rank-watch.ts: fifo kept the job's allocation on the drained node.
      assert.ok(
        again.every((r) => r.node !== node),
        again.map((r) => r.node).join(','),
      );
      const nodes = await runCli(['nodes', ...cli]);
      assert.match(nodes.stdout, /drained/);
      await runCli(['nodes', 'clear', node, ...cli]);
      assert.doesNotMatch((await runCli(['nodes', ...cli])).stdout, /drained/);
      await client.cancel(submitted.id);
      await waitFor('the job to end', 60_000, async () =>
        (await client.getJob(submitted.id)).current_replicas.every((r) => r.exit_code !== null) ? true : undefined,
      );
    },
  );
});
