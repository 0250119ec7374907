/**
 * Parity of the drivers of the job model: the same measurements, fed to the simulator
 * (SimJob + SimProfileStore) and to the control plane (ReportIngest + ProfileBook over a real
 * SQLite store), give the policy the same PolicyJob, its facts per GPU type included; the control
 * plane's facts on the job's type are the same on a cluster of one type and of two. All call
 * model/ for the fit, the discard rule, the progress buckets and the builders (policy-job.ts,
 * job-types.ts), so this holds by construction; the test guards it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_GPU_TYPE, type JobTypes, type PolicyJob } from '../core/cluster.js';
import { toPolicyJob } from '../control/loop/snapshot.js';
import { jobTypes, typedInputs } from '../control/loop/typed-snapshot.js';
import { UNKNOWN_TYPE_DISCOUNT } from './job-types.js';
import { getApplication, type TraceApplication } from '../sim/application.js';
import { polluxHooks } from '../sim/job-modes.js';
import { SimProfileStore } from '../sim/profile-store.js';
import { SimJob } from '../sim/sim-job.js';
import { adaptivePolicyJob } from '../sim/policy-jobs.js';
import { defaultTracesDir } from '../sim/workload.js';
import { controlDriver, PARITY_NODE as node, paritySpec } from '../control/testing/control-driver.js';

const app = getApplication('cifar10', defaultTracesDir())!;
const TOTAL_GPUS = 16;
const spec = paritySpec(app.name, Math.min(TOTAL_GPUS, Math.floor(app.max_batch_size / app.min_local_bsz)));

/** One measured step: replicas on one node, local batch; `slowdown` scales the trace's times. */
interface Step {
  replicas: number;
  local_bsz: number;
  slowdown: number;
  progress: number;
}

/** The measurement of a step as the trace gives it (step and sync time, gradient statistics). */
function measured(a: TraceApplication, s: Step) {
  const [step, sync] = a.throughput([s.replicas], s.local_bsz);
  const [sqr, variance] = a.gradStats(s.replicas * s.local_bsz, 0);
  return { step: step * s.slowdown, sync: sync * s.slowdown, sqr, variance };
}

/**
 * What a job's facts per GPU type say, read on each of `types`: its model, limits and measured
 * sizes there and its one-GPU rates (the remaining work, the restart cost and whether a restart
 * is under way are the driver's own records, as in `learned`).
 */
function typedView(t: JobTypes | undefined, types: readonly string[]): unknown[] {
  if (!t) return [];
  return types.map((type) => ({
    model: t.model(type),
    limits: t.limits(type),
    max_profiled: t.max_profiled[type],
    one_gpu: t.one_gpu_samples_per_s[type],
  }));
}

/**
 * Driver-specific facts a policy job also carries (identity, clock, service, declared work,
 * restarts): set by each driver from its own records, not learned from reports. Its per-type
 * facts are compared by what they say on the cluster's one type.
 */
function learned(pj: PolicyJob): Partial<PolicyJob> & { typed: unknown[] } {
  const {
    id: _id,
    submitted_at_s: _s,
    attained_service_gpu_s: _a,
    remaining_samples: _r,
    restarts: _n,
    // Who owns the job (the control plane knows its user; a workload may name none): not its model.
    owner: _o,
    team: _t,
    per_type,
    ...rest
  } = pj;
  return { ...rest, model: pj.model, typed: typedView(per_type, [DEFAULT_GPU_TYPE]) };
}

/**
 * What the control plane's round gives a job on a cluster of two GPU types, the job's own ('cpu',
 * the type of the test's node) and one where nobody measured: on its own type, its facts; on the
 * other, no model, no measured size, and a one-GPU rate just below its own.
 */
interface MixedView {
  own: unknown[];
  other: { model: unknown; max_profiled: number | undefined; one_gpu_ratio: number };
}

async function runBoth(
  jobs: readonly { id: string; steps: readonly Step[] }[],
): Promise<{ sim: ReturnType<typeof learned>[]; control: ReturnType<typeof learned>[]; mixed: MixedView[] }> {
  // The simulator's driver.
  const simStore = new SimProfileStore(polluxHooks.fit);
  // The control plane's driver, on a real store.
  const { store, profiles, report, stop } = controlDriver();
  const sim: ReturnType<typeof learned>[] = [];
  const control: ReturnType<typeof learned>[] = [];
  const mixed: MixedView[] = [];
  const allocated_at_s = 120;
  for (const { id, steps } of jobs) {
    const job = new SimJob({
      name: id,
      application: app,
      submit_s: 0,
      hooks: polluxHooks,
      profile: { key: app.name, store: simStore },
    });
    job.reallocate([1], allocated_at_s);
    await store.createJob({ id, name: id, user: 'u', spec }, 'u');
    let step = 0;
    for (const s of steps) {
      const m = measured(app, s);
      job.observe(1, s.replicas, s.local_bsz, m.step, m.sync, m.sqr, m.variance);
      job.progress = s.progress * app.target_progress;
      job.reportProfile();
      step += 1;
      const samples = Math.round(s.progress * 100_000);
      const { replicas, local_bsz } = s;
      await report(id, step, app.limits, { replicas, local_bsz, step_s: m.step, sync_s: m.sync, ...m, samples });
      const record = (await store.getJob(id))!;
      const running = {
        ...record,
        state: 'running' as const,
        launched_at_ms: allocated_at_s * 1000,
        checkpoint_on_stop: true,
        launches: 1,
      };
      const round = await profiles.forRound([running]);
      sim.push(learned(adaptivePolicyJob(job, TOTAL_GPUS)));
      // The control plane's round (control/loop/round.ts): on one type, the job's own type is that type.
      const types = [DEFAULT_GPU_TYPE];
      const [input] = await typedInputs(
        { store, machines: [node], types, profiles, own_profiles: round },
        [running],
        [running],
      );
      control.push(learned(toPolicyJob(running, 200_000, round.get(id), jobTypes(input!, types))));
      const two = ['cpu', 'a100'];
      const [input2] = await typedInputs(
        { store, machines: [node], types: two, profiles, own_profiles: round },
        [running],
        [running],
      );
      const facts = jobTypes(input2!, two);
      const other = {
        model: facts.model('a100'),
        max_profiled: facts.max_profiled.a100,
        one_gpu_ratio: Math.round((facts.one_gpu_samples_per_s.a100! / facts.one_gpu_samples_per_s.cpu!) * 1e9) / 1e9,
      };
      mixed.push({ own: typedView(facts, ['cpu']), other });
    }
  }
  await stop();
  return { sim, control, mixed };
}

/**
 * Every report gives the same policy job in the simulator and the control plane (one type), and
 * the control plane's facts on the job's own type are the same on a cluster of two types.
 */
function agree(r: Awaited<ReturnType<typeof runBoth>>): void {
  for (let k = 0; k < r.sim.length; k++) {
    assert.deepStrictEqual(r.sim[k], r.control[k], `report ${k + 1}`);
    assert.deepStrictEqual(r.mixed[k]!.own, r.sim[k]!.typed, `report ${k + 1}: its own type on a cluster of two types`);
    assert.deepStrictEqual(
      r.mixed[k]!.other,
      { model: undefined, max_profiled: 0, one_gpu_ratio: UNKNOWN_TYPE_DISCOUNT },
      `report ${k + 1}: a type nobody measured`,
    );
  }
}

describe('the simulator and the control plane build the same PolicyJob from the same reports', () => {
  const first = [
    { replicas: 1, local_bsz: 128, slowdown: 1, progress: 0.1 },
    { replicas: 2, local_bsz: 128, slowdown: 1, progress: 0.2 },
    { replicas: 4, local_bsz: 256, slowdown: 1, progress: 0.3 },
  ];

  it('a second job of the key agrees with its profile, keeps it and adds to it', async () => {
    const second = [
      { replicas: 2, local_bsz: 128, slowdown: 1.05, progress: 0.004 },
      { replicas: 4, local_bsz: 192, slowdown: 1.05, progress: 0.013 },
    ];
    const { sim, control, mixed } = await runBoth([
      { id: 'a', steps: first },
      { id: 'b', steps: second },
    ]);
    assert.equal(sim.length, 5);
    agree({ sim, control, mixed });
    const last = sim[sim.length - 1]!;
    assert.equal(last.model_from_profile, true, 'the second job uses the profile');
    assert.equal(last.allocated_since_s, 120, 'both drivers say since when the allocation holds');
    assert.ok(!('progress_at_risk_s' in last), 'a job that checkpoints when stopped risks nothing');
    assert.ok(last.model?.correction, 'corrected by the measurements it was fitted on');
  });

  it('a second job twice as slow discards the profile in both drivers', async () => {
    const second = [
      { replicas: 2, local_bsz: 128, slowdown: 2, progress: 0.01 },
      { replicas: 4, local_bsz: 256, slowdown: 2, progress: 0.02 },
    ];
    const { sim, control, mixed } = await runBoth([
      { id: 'a', steps: first },
      { id: 'b', steps: second },
    ]);
    agree({ sim, control, mixed });
    assert.equal(sim[sim.length - 1]!.model_from_profile, false, 'discarded: its own measurements only');
  });

  it('a job first measured at a shape the profile never measured is judged only once comparable, in both drivers', async () => {
    const second = [
      { replicas: 3, local_bsz: 128, slowdown: 2, progress: 0.01 },
      { replicas: 2, local_bsz: 128, slowdown: 2, progress: 0.02 },
    ];
    const { sim, control, mixed } = await runBoth([
      { id: 'a', steps: first },
      { id: 'b', steps: second },
    ]);
    agree({ sim, control, mixed });
    assert.deepEqual(
      sim.slice(3).map((pj) => pj.model_from_profile),
      [true, false],
      'unjudged at 3 replicas, discarded at 2',
    );
  });

  it('a job is not judged against the points it added to the profile itself, in both drivers', async () => {
    // Its first steps at 3 replicas, a shape only it measured, are slow (warm-up); its later ones agree with the profile.
    const second = [
      { replicas: 3, local_bsz: 128, slowdown: 2, progress: 0.01 },
      { replicas: 3, local_bsz: 160, slowdown: 1, progress: 0.02 },
      { replicas: 2, local_bsz: 128, slowdown: 1, progress: 0.03 },
    ];
    const { sim, control, mixed } = await runBoth([
      { id: 'a', steps: first },
      { id: 'b', steps: second },
    ]);
    agree({ sim, control, mixed });
    assert.deepEqual(
      sim.slice(3).map((pj) => pj.model_from_profile),
      [true, true, true],
      'kept: judged at 2 replicas only, where it agrees',
    );
  });
});
