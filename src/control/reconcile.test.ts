/**
 * Reconciliation after a server crash at awkward moments, in-process with real processes:
 * a crash mid-launch (processes exist, launch not recorded) and a crash right after a cancel
 * was recorded (replicas still alive); and, while the server runs, exits its listener never
 * heard (the periodic probe records them) and a cancelled job's device held until its process
 * is gone.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cpuSlots } from '../backends/local/devices.js';
import { LocalBackend } from '../backends/local/local-backend.js';
import { isAlive } from '../backends/local/process-info.js';
import { findPolicy } from '../policy/registry.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { ReplicaExit } from '../backends/backend.js';
import { Controller } from './controller.js';
import { killOwnGroup, waitFor } from '../../test-support/control/harness.js';
import { jobSpecFixture } from '../store/job-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-reconcile-'));
const pids: number[] = [];
const keepAlive = setInterval(() => {}, 1000);
after(() => {
  clearInterval(keepAlive);
  for (const pid of pids) killOwnGroup(pid, dir);
  rmSync(dir, { recursive: true, force: true });
});

const script = "process.on('SIGTERM', () => process.exit(143)); setInterval(() => {}, 1000)";
const spec = jobSpecFixture({ name: 's', command: [process.execPath, '-e', script], workdir: dir });

/** A real local backend whose exit listener is never called: every exit is "lost". */
class DeafBackend extends LocalBackend {
  override onExit(listener: (exit: ReplicaExit) => void): void {
    void listener;
  }
}

function controller(
  store: SqliteStore,
  data_dir: string,
  backend = new LocalBackend({ devices: cpuSlots(1), poll_ms: 50 }),
  grace_s = 5,
): Controller {
  return new Controller({
    store,
    backend,
    policy: findPolicy('fifo')!.create({ seed: 0 }),
    data_dir,
    secret: 's',
    api_url: 'http://127.0.0.1:1',
    interval_s: 60,
    grace_s,
    tick_ms: 50,
    watch_interval_s: 0.2,
  });
}

describe('reconciliation', () => {
  it('kills the processes of a launch that was never recorded, then launches once', async () => {
    const data_dir = join(dir, 'a');
    const store = new SqliteStore(':memory:');
    await store.createJob({ id: 'j1', name: 's', user: 'u', spec }, 'u');
    await store.assignJob('j1', { allocation: [0], devices: [0] }, 0, 'scheduler', 'test');
    // The old server spawned the replica and died before recording the launch.
    const old = new LocalBackend({ devices: cpuSlots(1) });
    const [orphan] = await old.launch({
      job_id: 'j1',
      attempt: 0,
      command: spec.command,
      workdir: dir,
      env: {},
      devices: [0],
      nodes: [0],
      num_nodes: 1,
      api_url: '',
      token: '',
      job_dir: join(data_dir, 'jobs', 'j1'),
    });
    old.close();
    pids.push(orphan!.pid);
    const c = controller(store, data_dir);
    await c.start();
    const job = await waitFor('the job to run again', 10_000, async () => {
      const j = await store.getJob('j1');
      return j?.state === 'running' ? j : undefined;
    });
    const live = await store.listLiveReplicas();
    pids.push(...live.map((r) => r.pid));
    assert.equal(live.length, 1);
    assert.notEqual(live[0]!.pid, orphan!.pid);
    assert.equal(job.launches, 1);
    await waitFor('the orphan to be gone', 5_000, async () => !isAlive(orphan!.pid, orphan!.proc_start));
    await c.cancel('j1', 'test');
    await waitFor('the replica to exit', 5_000, async () => (await store.listLiveReplicas()).length === 0);
    await c.stop();
    await store.close();
  });

  it('stops the live replicas of a job that was cancelled just before the crash', async () => {
    const data_dir = join(dir, 'b');
    const store = new SqliteStore(':memory:');
    await store.createJob({ id: 'j2', name: 's', user: 'u', spec }, 'u');
    await store.assignJob('j2', { allocation: [0], devices: [0] }, 0, 'scheduler', 'test');
    const old = new LocalBackend({ devices: cpuSlots(1) });
    const launched = await old.launch({
      job_id: 'j2',
      attempt: 0,
      command: spec.command,
      workdir: dir,
      env: {},
      devices: [0],
      nodes: [0],
      num_nodes: 1,
      api_url: '',
      token: '',
      job_dir: join(data_dir, 'jobs', 'j2'),
    });
    old.close();
    pids.push(launched[0]!.pid);
    await store.launchJob('j2', launched, 'backend', 'test');
    await store.finishJob('j2', 'cancelled', 'u', 'cancelled by u');
    const c = controller(store, data_dir);
    await c.start();
    await waitFor(
      'the exit to be recorded',
      8_000,
      async () => (await store.listReplicas('j2'))[0]!.exit_code !== null,
    ).catch(async (e: unknown) => {
      console.error(JSON.stringify(await store.listReplicas('j2')), JSON.stringify(await store.listEvents('j2')));
      throw e;
    });
    assert.equal((await store.listReplicas('j2'))[0]!.exit_code, 143, JSON.stringify(await store.listEvents('j2')));
    assert.equal(isAlive(launched[0]!.pid, launched[0]!.proc_start), false);
    assert.equal((await store.getJob('j2'))!.state, 'cancelled');
    await c.stop();
    await store.close();
  });

  it('finishes a rescale whose replicas checkpointed while the server was down', async () => {
    const data_dir = join(dir, 'c');
    const store = new SqliteStore(':memory:');
    await store.createJob({ id: 'j3', name: 's', user: 'u', spec }, 'u');
    await store.assignJob('j3', { allocation: [0], devices: [0] }, 0, 'scheduler', 'test');
    const old = new LocalBackend({ devices: cpuSlots(1) });
    const req = {
      job_id: 'j3',
      attempt: 0,
      command: spec.command,
      workdir: dir,
      env: {},
      devices: [0],
      nodes: [0],
      num_nodes: 1,
      api_url: '',
      token: '',
      job_dir: join(data_dir, 'jobs', 'j3'),
    };
    const launched = await old.launch(req);
    pids.push(launched[0]!.pid);
    await store.launchJob('j3', launched, 'backend', 'test');
    await store.stopJob('j3', { allocation: [0], devices: [0] }, 'rescale', 'scheduler', 'rescale');
    await new Promise((r) => setTimeout(r, 300)); // let the replica install its SIGTERM handler
    old.signal(
      { ...req, rank: 0, node: 'local', launch_id: '', pid: launched[0]!.pid, proc_start: launched[0]!.proc_start },
      'SIGTERM',
    );
    old.close(); // the server dies; the replica checkpoints and exits 143 on its own
    await waitFor('the replica to exit', 5_000, async () => !isAlive(launched[0]!.pid, launched[0]!.proc_start));
    const c = controller(store, data_dir);
    await c.start();
    const job = await waitFor('the relaunch', 10_000, async () => {
      const j = await store.getJob('j3');
      return j?.state === 'running' && j.launches === 2 ? j : undefined;
    });
    pids.push(...(await store.listLiveReplicas()).map((r) => r.pid));
    assert.equal((await store.listReplicas('j3', 0))[0]!.exit_code, 143);
    assert.equal(job.failures, 0);
    const events = (await store.listEvents('j3')).map((e) => `${e.actor}:${e.kind}`);
    assert.deepEqual(events.slice(-3), ['reconciler:replica-exited', 'controller:relaunch', 'backend:launched']);
    await c.cancel('j3', 'test');
    await waitFor('the replica to exit', 5_000, async () => (await store.listLiveReplicas()).length === 0);
    await c.stop();
    await store.close();
  });

  it('records exits its listener never heard (periodic probe): the job ends and its device is free', async () => {
    const store = new SqliteStore(':memory:');
    const c = controller(store, join(dir, 'd'), new DeafBackend({ devices: cpuSlots(1), poll_ms: 50 }));
    await c.start();
    const quick = await c.submit({ ...spec, command: [process.execPath, '-e', 'process.exit(0)'] }, 'u', 'u');
    await waitFor(
      'the unheard exit 0 to finish the job',
      10_000,
      async () => (await store.getJob(quick.id))!.state === 'succeeded',
    );
    const missing = await c.submit({ ...spec, command: ['./nonexistent.sh'] }, 'u', 'u');
    const failed = await waitFor('the unheard exit 127 to fail the job', 10_000, async () => {
      const j = await store.getJob(missing.id);
      return j?.state === 'failed' ? j : undefined;
    });
    assert.match(failed.reason, /exit code 127/);
    assert.deepEqual(
      (await store.listReplicas(missing.id)).map((r) => [r.exit_code, (r.exit_code ?? 0) > 0]),
      [[127, true]],
    );
    assert.deepEqual(await store.listLiveReplicas(), [], 'no device held');
    await c.stop();
    await store.close();
  });

  it("holds a cancelled job's device until its process is gone, then starts the next job at once", async () => {
    const store = new SqliteStore(':memory:');
    // A grace period long enough that the wait is seen before the SIGKILL on a loaded machine
    // (the suite runs this beside torch and Slurm tests).
    const c = controller(store, join(dir, 'e'), undefined, 8);
    await c.start();
    // Ignores SIGTERM: only the SIGKILL after the grace period ends it.
    const armed = join(dir, 'stubborn-armed');
    const stubborn = await c.submit(
      {
        ...spec,
        command: [
          process.execPath,
          '-e',
          "process.on('SIGTERM', () => {}); require('fs').writeFileSync(process.argv[1], 'up'); setInterval(() => {}, 1000)",
          armed,
        ],
      },
      'u',
      'u',
    );
    const [replica] = await waitFor('the stubborn job to run', 10_000, async () => {
      const live = await store.listLiveReplicas();
      return live.length === 1 ? live : undefined;
    });
    pids.push(replica!.pid);
    // Cancelled before its SIGTERM handler is in, it would exit at once and free the device (seen
    // under load with a fixed 300 ms wait): wait for the file it writes once the handler is in.
    await waitFor('the stubborn job to ignore SIGTERM', 10_000, async () => existsSync(armed));
    const next = await c.submit({ ...spec, command: [process.execPath, '-e', 'process.exit(0)'] }, 'u', 'u');
    await c.cancel(stubborn.id, 'u');
    const wait = await waitFor('the next job to wait for the device, saying why', 7_000, async () =>
      c.launchWaits.get(next.id),
    );
    assert.equal(wait, `device(s) local/0 still held by the exiting replicas of job ${stubborn.id}`);
    const done = await waitFor('the next job to run once the device is free', 15_000, async () => {
      const j = await store.getJob(next.id);
      return j?.state === 'succeeded' ? j : undefined;
    });
    const [exit] = await store.listReplicas(stubborn.id);
    assert.equal(exit!.exit_code, 137, 'SIGKILLed after the grace period');
    const launched = (await store.listEvents(next.id)).find((e) => e.kind === 'launched')!;
    assert.ok(launched.at_ms >= exit!.exited_at_ms!, 'not launched while the cancelled process still held the device');
    assert.ok(
      launched.at_ms - exit!.exited_at_ms! < 3000,
      `launched ${launched.at_ms - exit!.exited_at_ms!} ms after the device was freed`,
    );
    assert.equal(done.launches, 1);
    await c.stop();
    await store.close();
  });
});
