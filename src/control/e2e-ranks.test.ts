/**
 * End to end, the verdicts across ranks on real processes: a `goodput up` on 4 CPU slots runs
 * 3 gloo ranks of real torch through the SDK, rank 2 made slow (150 ms more compute per step).
 * The straggler verdict names rank 2 and its slow phase within 15 s of steady reports, in
 * `goodput show`, `goodput doctor <job>` and the events; then rank 1 is SIGSTOPped: the `rank-hung` event names it
 * within 60 s with its process state (stopped) and the others' stacks, its device is drained,
 * and the job runs again from its checkpoint on the 3 devices left (not device 1) well before the
 * 300 s job-level hung timeout; `goodput nodes` shows the mark and `goodput nodes clear` lifts it.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { JobDetail } from '../client/client.js';
import { runCli, sleep, testServers, waitFor, type ServerProcess } from '../../test-support/control/harness.js';
import { noPython, pythonWith } from '../../test-support/control/python.js';
import { rankFaultsJob, untilRanksReport } from '../../test-support/ranks/rank-scenarios.js';

const python = pythonWith(['torch']);
const servers = testServers();
const { data_dir } = servers;

describe('verdicts across ranks (torch, gloo, 3 ranks)', { skip: python ? undefined : noPython(['torch']) }, () => {
  let server: ServerProcess;
  before(async () => {
    server = await servers.start(['--cpu-slots', '4', '--interval-s', '1', '--policy', 'fifo']);
  });

  it('names the slow rank, then the stopped one, and restarts without its device', { timeout: 300_000 }, async () => {
    const { client } = server;
    const cli = ['--data-dir', data_dir];
    const args = ['--slow-rank', '2', '--slow-ms', '150', '--slow-phase', 'compute'];
    const submitted = await client.submit(rankFaultsJob('ranks', python!, data_dir, [2, 3], args));
    await untilRanksReport(client, submitted.id, 3, 180_000);
    const steady = Date.now();
    const straggler = await waitFor(
      'the straggler verdict',
      30_000,
      async () => (await client.ranks(submitted.id)).straggler ?? undefined,
    );
    assert.ok(Date.now() - steady <= 15_000, `straggler named after ${(Date.now() - steady) / 1000} s`);
    assert.equal(straggler.rank, 2);
    assert.equal(straggler.phase, 'compute');
    assert.ok(straggler.slowdown_pct > 50, straggler.line);
    const show = await runCli(['show', submitted.id, ...cli]);
    assert.match(show.stdout, /straggler {2}straggler: rank 2 \(node \S+, device 2\) computes/);
    const doctor = await runCli(['doctor', submitted.id, ...cli]);
    assert.match(doctor.stdout, /straggler {2}straggler: rank 2/);
    assert.match(doctor.stdout, /replica 1 {2}[RS] \((running|sleeping)\), [\d.]+ CPU-s; last log line: /);
    await waitFor('the straggler event', 10_000, async () =>
      (await client.events(submitted.id)).find((e) => e.kind === 'straggler'),
    );

    await sleep(3000); // a checkpoint behind it
    const before = await client.getJob(submitted.id);
    const victim = before.current_replicas.find((r) => r.rank === 1 && r.exit_code === null)!;
    process.kill(-victim.pid, 'SIGSTOP');
    const stopped = Date.now();
    const hung = await waitFor('the rank-hung event', 75_000, async () =>
      (await client.events(submitted.id)).find((e) => e.kind === 'rank-hung'),
    );
    assert.ok(Date.now() - stopped <= 60_000, `hang named after ${(Date.now() - stopped) / 1000} s`);
    assert.equal(hung.data.rank, 1);
    assert.equal(hung.data.evidence, 'silent');
    assert.match(String((hung.data.process as { state: string }).state), /^T /);
    assert.match(hung.reason, /rank 1 \(node \S+, device 1\) has sent nothing/);
    // The ranks that waited answered the stack request: they wait in the gradient collective.
    const stacks = hung.data.stacks as Record<string, string>;
    assert.match(stacks['0'] ?? '', /File /, JSON.stringify(Object.keys(stacks)));

    const again: JobDetail = await waitFor('the job to run again without device 1', 90_000, async () => {
      const j = await client.getJob(submitted.id);
      const live = j.current_replicas.filter((r) => r.attempt > victim.attempt && r.exit_code === null);
      return j.state === 'running' && live.length > 0 && j.step > before.step ? j : undefined;
    });
    assert.ok(!again.devices.includes(1), `devices ${again.devices.join(',')}`);
    assert.ok(Date.now() - stopped <= 120_000);
    const nodes = await runCli(['nodes', ...cli]);
    assert.match(nodes.stdout, /device 1 drained/);
    const node = again.current_replicas[0]!.node;
    const cleared = await runCli(['nodes', 'clear', `${node}/1`, ...cli]);
    assert.match(cleared.stdout, /cleared: device 1 of node \S+ \(drained/);
    assert.doesNotMatch((await runCli(['nodes', ...cli])).stdout, /drained/);
    await client.cancel(submitted.id);
  });
});
