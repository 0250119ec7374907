/**
 * End to end under a real `goodput up` (CPU slots) with real PyTorch (gloo): scripts written the
 * way people write them without Goodput (test-support/corpus/). A torchrun-style DDP script with
 * -n 2 runs as 2 ranks, waits (with an event saying why) until 2 slots are free, and never runs
 * smaller; declared --resumable, it resumes from its own snapshot after a stop without losing an
 * epoch; a plain MNIST-style script that is stopped gets an event that says what it lost, never
 * "checkpointed". The stops come from the scheduler: a newer job on the full cluster preempts the
 * preemptible MNIST gang and shrinks the resumable DDP job (the goodput policy's least-attained-
 * service queues, with a 5 GPU-s first queue and no minimum slice so that it happens within
 * seconds). Skipped with a message when no Python with torch is found.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  cleanup,
  runCli,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../../test-support/control/harness.js';
import { packagePath } from '../util/package-root.js';
import { noPython, pythonWith, torchrunBeside } from '../../test-support/control/python.js';

const python = pythonWith(['torch']);
const skip = python ? undefined : noPython(['torch']);
const corpus = packagePath('test-support', 'corpus');
/** The torchrun installed beside the interpreter (Debian's python3-torch has /usr/bin/torchrun). */
const torchrun = python === undefined ? undefined : torchrunBeside(python);

async function submitted(result: { status: number | null; stdout: string; stderr: string }): Promise<{ id: string }> {
  assert.equal(result.status, 0, result.stderr);
  assert.match(
    result.stderr,
    /goodput starts the ranks itself, as torchrun would: each rank runs `\S*python\S* ddp_snapshot\.py .*`.*; -n 2 from --nnodes x --nproc_per_node/,
  );
  const job = JSON.parse(result.stdout) as { id: string; spec: { command: string[]; max_replicas: number } };
  assert.equal(job.spec.max_replicas, 2);
  assert.equal(job.spec.command[1], 'ddp_snapshot.py');
  return job;
}

describe('plain scripts under goodput up', { skip }, () => {
  let data_dir: string;
  let server: ServerProcess;
  before(async () => {
    data_dir = tempDataDir('goodput-corpus-');
    server = await startServerProcess(data_dir, [
      '--cpu-slots',
      '3',
      '--interval-s',
      '1',
      '--grace-s',
      '10',
      '--policy-param',
      'queue_base_gpu_s=5',
      '--policy-param',
      'min_slice_restarts=0',
    ]);
  });
  after(() => cleanup(data_dir, server ? [server] : []));

  const log = (id: string, rank: number) => {
    try {
      return readFileSync(join(data_dir, 'jobs', id, 'logs', `replica-${rank}.log`), 'utf8');
    } catch {
      return '';
    }
  };
  const ended = (state: string) => ['succeeded', 'failed', 'cancelled'].includes(state);
  /** Epoch numbers at which each attempt of a ddp_snapshot.py rank-0 log resumed, and the last epoch it finished. */
  const snapshotStory = (text: string) =>
    text.split(/resuming from snapshot at epoch /).map((part, i) => ({
      resumed_at: i === 0 ? 0 : Number(/^\d+/.exec(part)![0]),
      last_done: Math.max(-1, ...[...part.matchAll(/epoch (\d+) done/g)].map((m) => Number(m[1]))),
    }));

  it(
    'answers at submit: a missing script, a gang beyond the cluster, -n beyond it, shared names, torchrun commands',
    { timeout: 120_000 },
    async () => {
      const dd = ['--data-dir', data_dir];
      const viaApi = await server.client
        .submit({ name: 'tr', workdir: corpus, command: ['torchrun', '--nproc_per_node', '2', 'ddp_snapshot.py'] })
        .then(
          () => 'accepted',
          (e: Error & { code?: string }) => `${e.code}: ${e.message}`,
        );
      assert.match(
        viaApi,
        /^E_SPEC: .*command: it starts its ranks through torchrun; the control plane starts one process per rank itself.*give the script's own command, e\.g\. \[PYTHON, "ddp_snapshot\.py"\] with max_replicas 2/,
      );
      const launchArg = await runCli([
        'submit',
        ...dd,
        '--workdir',
        corpus,
        '--',
        python!,
        '-m',
        'torch.distributed.launch',
        '--nproc_per_node',
        '2',
        'ddp_snapshot.py',
      ]);
      assert.equal(launchArg.status, 2);
      assert.match(
        launchArg.stderr,
        /passes --local_rank to the script; goodput sets LOCAL_RANK instead.*give the script's own command with -n/,
      );
      const disagree = await runCli([
        'submit',
        ...dd,
        '-n',
        '3',
        '--workdir',
        corpus,
        '--',
        python!,
        '-m',
        'torch.distributed.run',
        '--nproc_per_node',
        '2',
        'ddp_snapshot.py',
      ]);
      assert.equal(disagree.status, 2);
      assert.match(disagree.stderr, /-n 3 disagrees with the launcher's 2 rank\(s\)/);
      const missing = await runCli(['submit', ...dd, '--workdir', corpus, '--', python!, 'nope/train.py']);
      assert.notEqual(missing.status, 0);
      assert.match(missing.stderr, /E_NO_SCRIPT|script .*nope\/train\.py does not exist .*--no-script-check/);
      const unchecked = await runCli([
        'submit',
        ...dd,
        '--no-script-check',
        '--name',
        'unchecked',
        '--workdir',
        corpus,
        '--',
        python!,
        'nope/train.py',
      ]);
      assert.equal(unchecked.status, 0, unchecked.stderr);
      const big = await runCli(['submit', ...dd, '-n', '5', '--workdir', corpus, '--', python!, 'ddp_snapshot.py']);
      assert.notEqual(big.status, 0);
      assert.match(
        big.stderr,
        /gang of -n 5 processes .* this cluster has 3 CPU slot\(s\); submit it with -n 3 or less/,
      );
      const gang = await runCli([
        'submit',
        ...dd,
        '-n',
        '2',
        '--name',
        'twin',
        '--workdir',
        corpus,
        '--',
        python!,
        'ddp_snapshot.py',
        '--epochs',
        '1000',
        '--epoch-sleep-s',
        '1',
        // Not the script's default, snapshot.pt in the corpus: a tracked file the run would rewrite.
        '--snapshot',
        join(data_dir, 'twin-gang.pt'),
      ]);
      assert.equal(gang.status, 0, gang.stderr);
      assert.match(
        gang.stderr,
        /ddp_snapshot\.py does not import goodput, so it runs as a plain script: a gang of 2 processes started together/,
      );
      const elastic = await runCli([
        'submit',
        ...dd,
        '-n',
        '5',
        '--resumable',
        '--name',
        'twin',
        '--workdir',
        corpus,
        '--',
        python!,
        'ddp_snapshot.py',
        '--epochs',
        '1000',
        '--epoch-sleep-s',
        '1',
        '--snapshot',
        join(data_dir, 'twin-elastic.pt'),
      ]);
      assert.equal(elastic.status, 0, elastic.stderr);
      assert.match(elastic.stderr, /warning: -n 5 is more than the cluster's 3 CPU slot\(s\); the job gets at most 3/);
      assert.match(elastic.stderr, /warning: 1 other active job\(s\) are named 'twin'/);
      const logs = await runCli(['logs', 'twin', ...dd]);
      assert.notEqual(logs.status, 0);
      assert.match(logs.stderr, /2 jobs are named 'twin': \w+ \(\w+\), \w+ \(\w+\); give the job's id instead/);
      for (const j of await server.client.listJobs())
        if (j.state !== 'succeeded' && j.state !== 'failed' && j.state !== 'cancelled')
          await server.client.cancel(j.id);
      await waitFor(
        'the slots to be free',
        60_000,
        async () =>
          (await server.client.listJobs()).every((j) => ['cancelled', 'failed', 'succeeded'].includes(j.state)) &&
          (await server.client.getJob('unchecked').catch(() => undefined))?.current_replicas.every(
            (r) => r.exit_code !== null,
          ) !== false,
      );
    },
  );

  it('DDP with -n 2: two ranks, queued until two slots are free, never fewer', { timeout: 300_000 }, async () => {
    const { client } = server;
    const blocker = await client.submit({
      name: 'blocker',
      workdir: corpus,
      max_replicas: 2,
      command: [python!, 'mnist_plain.py', '--epochs', '100000', '--epoch-sleep-s', '0.2'],
    });
    await waitFor('the blocker to run 2 processes', 120_000, async () => {
      const j = await client.getJob(blocker.id);
      return j.state === 'running' && j.current_replicas.length === 2;
    });
    // Submitted as a torchrun user types it, where a torchrun beside the interpreter exists.
    const args = ['ddp_snapshot.py', '--epochs', '4', '--snapshot', join(data_dir, 'ddp-snapshot.pt')];
    const ddp =
      torchrun === undefined
        ? await client.submit({ name: 'ddp', workdir: corpus, max_replicas: 2, command: [python!, ...args] })
        : await submitted(
            await runCli([
              'submit',
              '--json',
              '--data-dir',
              data_dir,
              '--name',
              'ddp',
              '--workdir',
              corpus,
              '--',
              torchrun,
              '--standalone',
              '--nproc-per-node=2',
              ...args,
            ]),
          );
    const wait = await waitFor('the gang to say why it waits', 60_000, async () =>
      (await client.events(ddp.id)).find((e) => e.kind === 'waiting'),
    );
    assert.match(wait.reason, /waiting for 2 CPU slot\(s\) at once: a plain script .* gang of 2 processes/);
    assert.equal((await client.getJob(ddp.id)).state, 'queued', 'one free slot does not start it');
    await client.cancel(blocker.id);
    const done = await waitFor('the DDP job to finish', 240_000, async () => {
      const j = await client.getJob(ddp.id);
      return ['succeeded', 'failed', 'cancelled'].includes(j.state) ? j : undefined;
    });
    assert.equal(done.state, 'succeeded', log(ddp.id, 0));
    for (const rank of [0, 1]) {
      assert.match(
        log(ddp.id, rank),
        new RegExp(`\\[rank ${rank}\\] started: world 2, local rank ${rank}, group rank 0, OMP_NUM_THREADS 1`),
      );
      assert.match(log(ddp.id, rank), new RegExp(`\\[rank ${rank}\\] epoch 3 done, world 2`));
    }
    const launched = (await client.events(ddp.id)).filter((e) => e.kind === 'launched');
    assert.equal(launched.length, 1, 'started once, as a whole');
    assert.doesNotMatch(log(ddp.id, 0), /world 1/);
  });

  it(
    'a preemptible MNIST gang preempted by a newer job: the events say what it lost, never "checkpointed"',
    { timeout: 300_000 },
    async (t) => {
      const { client } = server;
      const job = await client.submit({
        name: 'mnist',
        workdir: corpus,
        max_replicas: 3,
        preemptible: true,
        command: [python!, 'mnist_plain.py', '--epochs', '100000', '--epoch-sleep-s', '0.2'],
      });
      t.after(async () => {
        await client.cancel(job.id).catch(() => undefined); // frees the slots for the next test even when an assertion failed
      });
      await waitFor('two epochs on 3 ranks', 120_000, async () => /epoch 2 /.test(log(job.id, 0)));
      const newcomer = await client.submit({
        name: 'newcomer',
        workdir: corpus,
        max_replicas: 1,
        command: [python!, 'mnist_plain.py', '--epochs', '2'],
      });
      const events = await waitFor('the preempted gang to start again after the newcomer', 180_000, async () => {
        const e = await client.events(job.id);
        return e.filter((x) => x.kind === 'launched').length >= 2 ? e : undefined;
      });
      assert.equal((await client.getJob(newcomer.id)).state, 'succeeded');
      const texts = events.map((e) => `${e.kind}: ${e.reason}`).join('\n');
      assert.doesNotMatch(texts, /checkpointed|resumes from its (last )?checkpoint/, texts);
      assert.match(
        texts,
        /rescale: preempted 3 -> 0 \(goodput: .*restarts from its beginning \(no checkpoint the control plane knows of\)\); stopped after [1-9]\d* (s|min) of work; it has no checkpoint the control plane knows of, so it restarts from its beginning/,
        texts,
      );
      assert.match(
        texts,
        /requeued: stopped after [1-9]\d* (s|min) of work; it has no checkpoint the control plane knows of, so it restarts from its beginning; waiting for devices/,
        texts,
      );
      assert.match(
        texts,
        /replica-exited: replica 0 of attempt 0 exited with 143/,
        'a plain script that dies of SIGTERM',
      );
      // What the events said is what happened: the relaunch started over at its first epoch.
      await waitFor(
        'the relaunch to train',
        120_000,
        async () => (log(job.id, 0).match(/^epoch 1 /gm) ?? []).length >= 2,
      );
      await client.cancel(job.id);
      await waitFor('the slots to be free', 60_000, async () => ended((await client.getJob(job.id)).state));
    },
  );

  it(
    'DDP --resumable shrunk for a newer gang: resumes from its own snapshot, no epoch lost, grows back',
    { timeout: 300_000 },
    async () => {
      const { client } = server;
      const job = await client.submit({
        name: 'ddp-resumable',
        workdir: corpus,
        max_replicas: 2,
        resumable: true,
        command: [
          python!,
          'ddp_snapshot.py',
          '--epochs',
          '60',
          '--epoch-sleep-s',
          '0.3',
          '--snapshot',
          join(data_dir, 'resumable-snapshot.pt'),
        ],
      });
      await waitFor('three epochs', 120_000, async () => /epoch 2 done/.test(log(job.id, 0)));
      // A gang of 2 on the 1 free slot: the scheduler shrinks the resumable job to make room.
      const gang = await client.submit({
        name: 'newer-gang',
        workdir: corpus,
        max_replicas: 2,
        command: [python!, 'mnist_plain.py', '--epochs', '2'],
      });
      const done = await waitFor('both jobs to finish', 240_000, async () => {
        const jobs = await Promise.all([job.id, gang.id].map((id) => client.getJob(id)));
        return jobs.every((j) => ended(j.state)) ? jobs : undefined;
      });
      const text = log(job.id, 0);
      assert.deepEqual(
        done.map((j) => j.state),
        ['succeeded', 'succeeded'],
        text,
      );
      assert.match(text, /\[rank 0\] started: world 2/, 'with the slots free it starts with all of its -n');
      const events = await client.events(job.id);
      const texts = events.map((e) => `${e.kind}: ${e.reason}`).join('\n');
      assert.match(texts, /rescale: shrank 2 -> 1 /, texts);
      assert.match(texts, /relaunch: stopped; it resumes from its own snapshot \(declared resumable\)/, texts);
      assert.doesNotMatch(texts, /restarts from its beginning|loses/, texts);
      assert.match(text, /\[rank 0\] started: world 1/, `it ran on 1 rank while the gang ran:\n${text}`);
      const story = snapshotStory(text);
      assert.ok(story.length >= 2, `rank 0 resumed from its snapshot:\n${text}`);
      let done_epoch = story[0]!.last_done;
      for (const attempt of story.slice(1)) {
        assert.ok(
          attempt.resumed_at >= done_epoch + 1,
          `resumed at epoch ${attempt.resumed_at} after epoch ${done_epoch} was done: no epoch lost`,
        );
        done_epoch = Math.max(done_epoch, attempt.last_done);
      }
      assert.equal(done_epoch, 59);
    },
  );
});
