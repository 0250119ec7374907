/**
 * End to end (compiled CLI, real `goodput up` with the default goodput policy, synthetic
 * trainers on 4 CPU slots): profile keys. A first job of a key starts at 1 replica,
 * reports, grows and reports again; a second job of the same key (other arguments) then starts
 * directly at the efficient size its key's profile predicts, while a job of an unknown key
 * starts at 1. A job of the key that measures far from the profile discards it at its first reports.
 * With the policy's `profiles=false` a job of the known key starts at 1 and teaches the profile nothing;
 * `goodput profiles rm` forgets the key's profile. A restart reads back the policy's saved memos.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { EventView, GoodputClient } from '../client/client.js';
import {
  cleanup,
  runCli,
  sleep,
  startServerProcess,
  tempDataDir,
  TRAINER,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';

const data_dir = tempDataDir();
const servers: ServerProcess[] = [];
after(() => cleanup(data_dir, servers));
const dd = ['--data-dir', data_dir];

/** Submits a long synthetic trainer through the CLI; `extra` goes to the trainer, `flags` to submit. */
async function submit(name: string, flags: readonly string[], extra: readonly string[]): Promise<string> {
  const r = await runCli([
    'submit',
    '--json',
    '-J',
    name,
    '-n',
    '4',
    '--workdir',
    data_dir,
    ...flags,
    ...dd,
    '--',
    process.execPath,
    TRAINER,
    '--samples',
    '100000000',
    ...extra,
  ]);
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as { id: string }).id;
}

/** Replica count of the job's first launch. */
async function firstLaunch(client: GoodputClient, id: string): Promise<{ replicas: number; events: EventView[] }> {
  return waitFor(`job ${id} to launch`, 30_000, async () => {
    const events = await client.events(id);
    const launched = events.find((e) => e.kind === 'launched');
    return launched ? { replicas: (launched.data.replicas as unknown[]).length, events } : undefined;
  });
}

describe('profiles: a second job of a known key starts at its efficient size', () => {
  it(
    "learns from the first job, starts the second from its key's profile, an unknown key at 1",
    { timeout: 150_000 },
    async () => {
      const server = await startServerProcess(data_dir, [
        '--cpu-slots',
        '4',
        '--interval-s',
        '1',
        '--grace-s',
        '3',
        ...['restart_delay_s=1', 'queue_base_gpu_s=4', 'min_slice_restarts=3'].flatMap((p) => ['--policy-param', p]),
      ]);
      servers.push(server);
      const { client } = server;

      // 1. The first job of the key (default key of the command: the trainer's script name).
      const first = await submit('first', [], ['--app', 'cifar10']);
      assert.equal((await firstLaunch(client, first)).replicas, 1, 'nothing known: one replica');
      assert.equal((await client.getJob(first)).profile_key, 'synthetic-trainer');
      const profile = await waitFor("the key's profile to hold a size above 1", 60_000, async () => {
        const [p] = await client.profiles();
        return p && p.measured_replicas.some((r) => r > 1) ? p : undefined;
      });
      assert.deepEqual([profile.key, profile.gpu_type, profile.jobs], ['synthetic-trainer', 'cpu', 1]);
      await client.cancel(first);

      // 2. Another run of the same model (other arguments): starts from the profile.
      const second = await submit('second', [], ['--app', 'cifar10', '--report-every-s', '0.5']);
      const { replicas, events } = await firstLaunch(client, second);
      const detail = await client.getJob(second);
      const used = events.find((e) => e.kind === 'profile-used');
      assert.ok(used, events.map((e) => `${e.kind}: ${e.reason}`).join('\n'));
      assert.ok(
        events.indexOf(used) < events.findIndex((e) => e.kind === 'assigned'),
        'decided before its first assignment',
      );
      assert.equal(detail.restarts, 0, 'no restart to get there');
      assert.ok(
        replicas > 1 && replicas <= detail.spec.max_replicas,
        `first launch on ${replicas} replicas: ${events.map((e) => `${e.kind}: ${e.reason}`).join('\n')}`,
      );
      assert.equal(replicas, Math.max(...profile.measured_replicas), 'the efficient size the first job settled at');
      assert.match(
        events.find((e) => e.kind === 'assigned')!.reason,
        /first start on \d CPU slots \(goodput: predicted speedup x[\d.]+ over 1 replica by the profile of 'synthetic-trainer'/,
      );
      const shown = await runCli(['show', second, ...dd]);
      assert.match(shown.stdout, /^profile\s+'synthetic-trainer': model from the profile on cpu/m, shown.stdout);
      assert.match(
        shown.stdout,
        /^speedup\s+predicted x[\d.]+ now over 1 replica, best x[\d.]+ on \d replicas/m,
        'predicted from the profile before its own reports',
      );
      // The listing (`goodput ls`, the dashboard) shows the insight `show` does: the model the
      // profile corrects, as the scheduler sized the job with.
      await waitFor('the listing to agree with the detail', 15_000, async () => {
        const inList = (await client.listJobs()).find((j) => j.id === second)!.insight;
        const inDetail = (await client.getJob(second)).insight;
        return inList.speedup !== null && JSON.stringify(inList) === JSON.stringify(inDetail) ? true : undefined;
      });
      const listed = await runCli(['profiles', ...dd]);
      assert.match(listed.stdout, /^synthetic-trainer\s+cpu\s+[12]\s+1,/m, listed.stdout);
      await client.cancel(second);

      // 3. A job of the key that is not the model the profile describes (6x slower on more than one
      // replica): starts from the profile, and its first reports discard it.
      const before = (await client.profile('synthetic-trainer'))[0]!.jobs;
      const slow = await submit('slow', [], ['--app', 'cifar10', '--multi-replica-slowdown', '6']);
      assert.ok((await firstLaunch(client, slow)).replicas > 1);
      const discarded = await waitFor('the profile to be discarded', 30_000, async () =>
        (await client.events(slow)).find((e) => e.kind === 'profile-discarded'),
      );
      assert.match(
        discarded.reason,
        /^profile of 'synthetic-trainer' on cpu discarded: an optimizer step at \d replicas .* took [\d.]+ s where the profile predicts [\d.]+ s/,
      );
      const report = (await client.reports(slow, 1000))[0]!;
      assert.ok(Date.parse(discarded.at) - report.received_at_ms < 20_000, 'at its first reports');
      assert.equal((await client.getJob(slow)).profile_use, 'discarded');
      assert.equal((await client.profile('synthetic-trainer'))[0]!.jobs, before, 'it adds nothing to the profile');
      assert.match(
        (await runCli(['show', slow, ...dd])).stdout,
        /^profile\s+'synthetic-trainer': discarded at \S+: an optimizer step/m,
      );
      await client.cancel(slow);

      // 4. A job of a key nothing has measured starts at 1 replica.
      const fresh = await submit('fresh', ['--profile', 'fresh-model'], ['--app', 'cifar10']);
      const unknown = await firstLaunch(client, fresh);
      assert.equal(unknown.replicas, 1, unknown.events.map((e) => `${e.kind}: ${e.reason}`).join('\n'));
      assert.equal(
        unknown.events.some((e) => e.kind === 'profile-used'),
        false,
      );
      await client.cancel(fresh);

      // 5. Profiles off (`--policy-param profiles=false`, as in the simulator): a job of the known
      // key starts at 1 and adds nothing to the profile.
      await waitFor('the jobs to end', 30_000, async () =>
        (await client.listJobs()).every((j) => ['cancelled', 'succeeded', 'failed'].includes(j.state)),
      );
      process.kill(server.pid, 'SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
      const off = await startServerProcess(data_dir, [
        '--cpu-slots',
        '4',
        '--interval-s',
        '1',
        '--grace-s',
        '3',
        ...['restart_delay_s=1', 'queue_base_gpu_s=4', 'min_slice_restarts=3', 'profiles=false'].flatMap((p) => [
          '--policy-param',
          p,
        ]),
      ]);
      servers.push(off);
      // The policy's memos, saved when the first server stopped, are read back (issue #49).
      assert.match(readFileSync(join(data_dir, 'up.log'), 'utf8'), /policy memos: \d+ kB saved 0 min ago, read back/);
      const known = (await off.client.profile('synthetic-trainer'))[0]!;
      const plain = await submit('plain', [], ['--app', 'cifar10', '--report-every-s', '0.5']);
      const start = await firstLaunch(off.client, plain);
      assert.equal(start.replicas, 1, start.events.map((e) => `${e.kind}: ${e.reason}`).join('\n'));
      await waitFor('its first reports', 30_000, async () => (await off.client.reports(plain, 10)).length > 0);
      await sleep(2000);
      assert.equal(
        (await off.client.events(plain)).some((e) => e.kind === 'profile-used'),
        false,
      );
      assert.deepEqual((await off.client.profile('synthetic-trainer'))[0], known, 'it adds nothing to the profile');
      await off.client.cancel(plain);

      // 6. `goodput profiles rm`: the key's profile is gone; bad input is a message, not a trace.
      const rm = await runCli(['profiles', 'rm', 'synthetic-trainer', ...dd]);
      assert.equal(rm.status, 0, rm.stderr);
      assert.match(
        rm.stdout,
        /^removed the profile of 'synthetic-trainer' on cpu \(\d+ job\(s\), replicas [\d, ]+\)$/m,
      );
      assert.doesNotMatch((await runCli(['profiles', ...dd])).stdout, /synthetic-trainer/);
      const again = await runCli(['profiles', 'rm', 'synthetic-trainer', ...dd]);
      assert.equal(again.status, 1);
      assert.match(again.stderr, /no profile 'synthetic-trainer'/);
      assert.doesNotMatch(again.stderr, /^\s+at /m);
      const misuse = await runCli(['profiles', 'ls', '--gpu-type', 'cpu', ...dd]);
      assert.equal(misuse.status, 2);
      assert.match(misuse.stderr, /--gpu-type goes with 'rm'/);
    },
  );
});
