/**
 * The controller's side of a cluster that holds launches (Backend.held, E_LAUNCH_HELD): a held
 * attempt leaves the job `starting` with the backend's reason and is recorded once released; an
 * exit while held is kept until then; a job cancelled while held has its attempt abandoned; a
 * launch refused for the cluster's state waits and is retried once a round; a spec the backend
 * cannot carry is refused at submit. In-process, a real local backend whose hold is switched by
 * the test (the Slurm side is e2e-slurm-partition.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { LaunchedReplica, LaunchRequest, SpecToCarry } from '../backends/backend.js';
import { cpuSlots } from '../backends/local/devices.js';
import { LocalBackend } from '../backends/local/local-backend.js';
import { GoodputError } from '../core/errors.js';
import type { ClusterSnapshot } from '../core/cluster.js';
import type { Policy, PolicyDecision } from '../policy/policy.js';
import { findPolicy } from '../policy/registry.js';
import { jobSpecFixture } from '../store/job-fixture.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { JobSpec } from '../store/types.js';
import { Controller } from './controller.js';
import { waitFor } from '../../test-support/control/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-hold-'));
const keepAlive = setInterval(() => {}, 1000);
after(() => {
  clearInterval(keepAlive);
  rmSync(dir, { recursive: true, force: true });
});

/** A local backend the test makes hold its launches (as a PENDING Slurm job) or refuse them (a drained partition). */
class HoldingBackend extends LocalBackend {
  hold: string | undefined;
  refuse: string | undefined;
  launches = 0;
  abandoned: string[] = [];
  /** Set: launches wait for it (an sbatch that takes its time). */
  slow: Promise<void> | undefined;
  override async launch(req: LaunchRequest): Promise<LaunchedReplica[]> {
    this.launches++;
    await this.slow;
    if (this.refuse) throw new GoodputError('E_LAUNCH_HELD', this.refuse);
    return super.launch(req);
  }
  held(): string | undefined {
    return this.hold;
  }
  /** Set: the cluster accepts no new jobs (a drained partition); seen from the next refresh on, as on Slurm. */
  drained: string | undefined;
  private drainedSeen: string | undefined;
  /** Runs once, inside the next refresh after it read the cluster: an operator acting mid-round. */
  midRefresh: (() => Promise<void>) | undefined;
  override async refresh(): Promise<void> {
    await super.refresh();
    this.drainedSeen = this.drained;
    const act = this.midRefresh;
    this.midRefresh = undefined;
    await act?.();
  }
  launchRefusal(): string | undefined {
    return this.drainedSeen;
  }
  override async abandon(job_id: string, job_dir: string, attempt: number): Promise<void> {
    this.abandoned.push(`${job_id}/${attempt}`);
    return super.abandon(job_id, job_dir, attempt);
  }
  refuseSpec(spec: SpecToCarry): string | undefined {
    return spec.env.SBATCH_PARTITION !== undefined ? 'env: SBATCH_PARTITION: not carried' : undefined;
  }
}

const spec = (script: string): JobSpec =>
  jobSpecFixture({ name: 's', command: [process.execPath, '-e', script], workdir: dir });
const SLEEPER = "process.on('SIGTERM', () => process.exit(143)); setInterval(() => {}, 1000)";

/** A policy the test scripts: `plan` by job id, else the allocation in force. */
class ScriptedPolicy implements Policy {
  readonly name = 'scripted';
  readonly plan = new Map<string, number[]>();
  decide(s: ClusterSnapshot): PolicyDecision {
    return {
      allocations: Object.fromEntries(s.jobs.map((j) => [j.id, this.plan.get(j.id) ?? s.allocations[j.id] ?? []])),
    };
  }
}

async function setup(
  name: string,
  interval_s = 60,
  policy: Policy = findPolicy('fifo')!.create({ seed: 0 }),
  slots = 1,
): Promise<{ c: Controller; b: HoldingBackend; store: SqliteStore }> {
  const store = new SqliteStore(':memory:');
  const b = new HoldingBackend({ devices: cpuSlots(slots), poll_ms: 50 });
  const c = new Controller({
    store,
    backend: b,
    policy,
    data_dir: join(dir, name),
    secret: 's',
    api_url: 'http://127.0.0.1:1',
    interval_s,
    grace_s: 2,
    tick_ms: 50,
    watch_interval_s: 0.2,
    hung_timeout_s: 1,
  });
  await c.start();
  return { c, b, store };
}

describe('launches the cluster holds', () => {
  it('a held attempt is starting with the reason and no device in use, then running from its release', async () => {
    const { c, b, store } = await setup('held');
    b.hold = 'Slurm job 7 is PENDING (PartitionDown)';
    const job = await c.submit(spec(SLEEPER), 'u', 'u');
    await waitFor('the launch to be held', 5000, async () => c.backendHolds.get(job.id));
    await new Promise((r) => setTimeout(r, 400));
    const held = (await store.getJob(job.id))!;
    assert.equal(held.state, 'starting');
    assert.equal(c.launchWaits.get(job.id), b.hold);
    assert.ok(
      (await store.listEvents(job.id)).some(
        (e) => e.kind === 'waiting' && e.reason === `launched, not running yet: ${b.hold}`,
      ),
    );
    assert.equal(b.launches, 1, 'submitted once, not at every tick');
    const released_ms = Date.now();
    b.hold = undefined;
    const running = await waitFor('the job to run', 5000, async () =>
      (await store.getJob(job.id))?.state === 'running' ? store.getJob(job.id) : undefined,
    );
    assert.ok(
      running!.launched_at_ms! >= released_ms,
      'it runs (and hung detection counts) from its release, not from its submission',
    );
    assert.equal(c.backendHolds.has(job.id), false);
    await c.cancel(job.id, 'u');
    await c.stop();
  });

  it('an exit while held is recorded once released; a job cancelled while held has its attempt abandoned', async () => {
    const { c, b, store } = await setup('exit');
    b.hold = 'Slurm job 8 is PENDING (ReqNodeNotAvail)';
    const quick = await c.submit(spec('process.exit(0)'), 'u', 'u');
    await waitFor('the launch to be held', 5000, async () => c.backendHolds.get(quick.id));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await store.getJob(quick.id))!.state, 'starting', 'its exit is kept while the attempt is held');
    b.hold = undefined;
    await waitFor('the job to succeed', 5000, async () => (await store.getJob(quick.id))?.state === 'succeeded');
    b.hold = 'Slurm job 9 is PENDING (PartitionDown)';
    const job = await c.submit(spec(SLEEPER), 'u', 'u');
    await waitFor('the launch to be held', 5000, async () => c.backendHolds.get(job.id));
    await c.cancel(job.id, 'u');
    await waitFor(
      'the held attempt to be abandoned',
      5000,
      async () => b.abandoned.filter((a) => a === `${job.id}/0`).length >= 2,
    );
    await c.stop();
  });

  it("a launch refused for the cluster's state waits, is retried once a round, and runs once accepted", async () => {
    const { c, b, store } = await setup('refused', 0.5);
    b.refuse = 'Slurm refuses new jobs now: Required partition not available (inactive or drain)';
    const job = await c.submit(spec(SLEEPER), 'u', 'u');
    await waitFor('the refusal', 5000, async () => c.backendHolds.get(job.id));
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal((await store.getJob(job.id))!.state, 'starting');
    assert.ok(
      b.launches >= 2 && b.launches <= 4,
      `retried about once a round (0.5 s), not at every 50 ms tick: ${b.launches} tries`,
    );
    assert.match(c.launchWaits.get(job.id) ?? '', /Required partition not available .*retried each round/);
    // While a retry is under way the job still shows why it waits (CI saw `show` print no reason).
    let release = () => {};
    b.slow = new Promise((r) => (release = r));
    const tries = b.launches;
    await waitFor('a retry to be under way', 5000, async () => b.launches > tries);
    assert.match(c.launchWaits.get(job.id) ?? '', /Required partition not available/, 'shown during the retry');
    b.slow = undefined;
    release();
    b.refuse = undefined;
    await waitFor('the job to run', 5000, async () => (await store.getJob(job.id))?.state === 'running');
    await c.cancel(job.id, 'u');
    await c.stop();
  });

  it('a drain stops no running job: a rescale waits while the cluster accepts no new jobs, then happens', async () => {
    const policy = new ScriptedPolicy();
    const { c, b, store } = await setup('drain-keep', 0.2, policy, 2);
    const a = await c.submit({ ...spec(SLEEPER), min_replicas: 1, max_replicas: 2 }, 'u', 'u');
    policy.plan.set(a.id, [0, 0]);
    const running = await waitFor('a to run on 2 slots', 5000, async () => {
      const j = await store.getJob(a.id);
      return j?.state === 'running' && j.allocation.length === 2 ? j : undefined;
    });
    b.drained = 'Slurm partition gpu is draining (State=DRAIN: it accepts no new jobs; running ones go on)';
    const launches = b.launches;
    const other = await c.submit(spec(SLEEPER), 'u', 'u');
    policy.plan.set(a.id, [0]);
    policy.plan.set(other.id, [0]);
    const kept = await waitFor('the kept event', 5000, async () =>
      (await store.listEvents(a.id)).find((e) => e.kind === 'waiting' && e.reason.startsWith('kept on')),
    );
    assert.equal(kept.reason, `kept on 2 CPU slots: ${b.drained}; the rescale to 1 waits until it accepts jobs`);
    await new Promise((r) => setTimeout(r, 1000));
    const still = (await store.getJob(a.id))!;
    assert.equal(still.state, 'running', 'not stopped while drained');
    assert.equal(still.launches, running.launches, 'the same attempt runs');
    assert.deepEqual(still.allocation, running.allocation);
    assert.ok(!(await store.listEvents(a.id)).some((e) => e.kind === 'rescale'));
    assert.equal(
      (await store.listEvents(a.id)).filter((e) => e.reason.startsWith('kept on')).length,
      1,
      'one event per drain',
    );
    assert.equal(
      (await store.getJob(other.id))!.state,
      'queued',
      'the devices of a kept job are given to no other job',
    );
    assert.equal(b.launches, launches, 'nothing launched while drained');
    b.drained = undefined;
    await waitFor('a to be rescaled to 1 once the cluster accepts jobs', 10_000, async () => {
      const j = await store.getJob(a.id);
      return j?.state === 'running' && j.allocation.length === 1 && j.launches > running.launches ? j : undefined;
    });
    assert.ok((await store.listEvents(a.id)).some((e) => e.kind === 'rescale'));
    await waitFor('the other job to run', 10_000, async () => (await store.getJob(other.id))?.state === 'running');
    for (const id of [a.id, other.id]) await c.cancel(id, 'u');
    await c.stop();
  });

  it('a job submitted just after a drain is decided on with the drain seen, even mid-round', async () => {
    // As optimus does: the first job shrinks to one slot once a second job is in the snapshot.
    const policy: Policy = {
      name: 'shrink-for-a-newcomer',
      decide: (s) => ({
        allocations: Object.fromEntries(s.jobs.map((j) => [j.id, s.jobs.length === 1 ? [0, 0] : [0]])),
      }),
    };
    const { c, b, store } = await setup('drain-mid-round', 0.2, policy, 2);
    try {
      const a = await c.submit({ ...spec(SLEEPER), min_replicas: 1, max_replicas: 2 }, 'u', 'u');
      const running = await waitFor('a to run on 2 slots', 5000, async () => {
        const j = await store.getJob(a.id);
        return j?.state === 'running' && j.allocation.length === 2 ? j : undefined;
      });
      // The operator drains, then a user submits, while a round is between reading the cluster and
      // reading the jobs: that round must not see the new job with the partition as it was before.
      b.midRefresh = async () => {
        b.drained = 'Slurm partition gpu is draining (State=DRAIN: it accepts no new jobs; running ones go on)';
        await c.submit(spec(SLEEPER), 'u', 'u');
      };
      await waitFor('the kept event', 5000, async () =>
        (await store.listEvents(a.id)).find((e) => e.kind === 'waiting' && e.reason.startsWith('kept on')),
      );
      const still = (await store.getJob(a.id))!;
      assert.equal(still.state, 'running', 'not stopped while drained');
      assert.equal(still.launches, running.launches, 'the same attempt runs');
      assert.ok(
        !(await store.listEvents(a.id)).some((e) => e.kind === 'rescale'),
        'no rescale decided before the drain was seen',
      );
    } finally {
      // A failing run, too, leaves no sleeper behind.
      b.drained = undefined;
      for (const j of await store.listJobs()) await c.cancel(j.id, 'u').catch(() => undefined);
      await c.stop();
    }
  });

  it('a drain stops no running job for a preemption either; it is preempted once the cluster accepts jobs', async () => {
    const policy = new ScriptedPolicy();
    const { c, b, store } = await setup('drain-preempt', 0.2, policy, 1);
    const a = await c.submit(spec(SLEEPER), 'u', 'u');
    policy.plan.set(a.id, [0]);
    await waitFor('a to run', 5000, async () => (await store.getJob(a.id))?.state === 'running');
    b.drained = 'Slurm partition gpu is down (State=DOWN: new jobs stay PENDING until it is up)';
    policy.plan.set(a.id, []);
    const kept = await waitFor('the kept event', 5000, async () =>
      (await store.listEvents(a.id)).find((e) => e.reason.startsWith('kept on')),
    );
    assert.equal(kept.reason, `kept on 1 CPU slot: ${b.drained}; the preemption waits until it accepts jobs`);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal((await store.getJob(a.id))!.state, 'running');
    b.drained = undefined;
    await waitFor('a to be preempted', 5000, async () =>
      ['preempted', 'rescaling'].includes((await store.getJob(a.id))?.state ?? ''),
    );
    await c.cancel(a.id, 'u');
    await c.stop();
  });

  it('refuses at submit a spec the backend cannot carry (E_SPEC)', async () => {
    const { c } = await setup('spec');
    await assert.rejects(
      c.submit({ ...spec(SLEEPER), env: { SBATCH_PARTITION: 'x' } }, 'u', 'u'),
      (e: unknown) => (e as GoodputError).code === 'E_SPEC' && /SBATCH_PARTITION/.test((e as Error).message),
    );
    await c.stop();
  });
});
