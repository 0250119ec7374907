/**
 * Parity of the mixed-type simulator (sim/hetero/: KeyProfiles, HeteroJob, heteroPolicyJob) and
 * the control plane (ReportIngest + ProfileBook over a real SQLite store, typedInputs, jobTypes)
 * on a cluster of two GPU types: a job of a key measures on one type; a second job of the key,
 * not yet placed, gets the same typed policy job from both drivers, its model, limits, measured
 * sizes and one-GPU rates per type. Both keep the key's profile by model/profile-keeper.ts and
 * fit it by model/job-fit.ts `fitAndCorrect` in configuration order, so the order the drivers got
 * the reports in does not matter. One-GPU rates: the simulator takes Sia's from its traces for
 * the published figures; here it is told to derive them from its models, as the control plane does
 * (sim/hetero/hetero-sim.ts `OneGpuRates`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobTypes } from '../core/cluster.js';
import { jobTypes, typedInputs } from '../control/loop/typed-snapshot.js';
import { getApplication } from '../sim/application.js';
import { HeteroJob } from '../sim/hetero/hetero-job.js';
import { heteroPolicyJob } from '../sim/hetero/hetero-sim.js';
import { KeyProfiles } from '../sim/hetero/key-profiles.js';
import { TypeThroughput, type HeteroApplication } from '../sim/hetero/typed-app.js';
import { defaultTracesDir } from '../sim/workload.js';
import { controlDriver, PARITY_NODE as node, paritySpec } from '../control/testing/control-driver.js';

const base = getApplication('cifar10', defaultTracesDir())!;
/** The control plane's type of the test's node (its devices are CPU slots), and one nobody measured. */
const TYPES = ['cpu', 'a100'];
/** The application on each type, from its one-type trace: its batch range is the reported limits'. */
function heteroApp(): HeteroApplication {
  const rows = [base.limits.min_local_bsz, base.limits.max_local_bsz].map((local_bsz) => {
    const [step_time_s, sync_time_s] = base.throughput([1], local_bsz);
    return { num_nodes: 1, num_replicas: 1, local_bsz, step_time_s, sync_time_s };
  });
  return {
    name: base.name,
    base,
    byType: new Map(TYPES.map((t) => [t, new TypeThroughput(t, rows)])),
    calibration: 1,
    rescale_s: 30,
  };
}

const spec = paritySpec(base.name, 16);

/**
 * What a typed policy job says on each type (remaining work and restart cost are each driver's
 * own). Batch limits only on the measured type: on another, the simulator knows the type's batch
 * range from its traces, the control plane nothing until a job reports there.
 */
function typedView(t: JobTypes) {
  return TYPES.map((type) => ({
    type,
    model: t.model(type),
    ...(type === 'cpu' ? { limits: t.limits(type) } : {}),
    max_profiled: t.max_profiled[type],
    one_gpu: t.one_gpu_samples_per_s[type],
  }));
}

/** Job `a` measures `steps` (replicas, local batch) on `cpu`, in this order; job `b` is then seen by both drivers. */
async function both(steps: readonly (readonly [number, number])[]) {
  const profiles = new KeyProfiles();
  const { store, profiles: book, report, stop } = controlDriver();
  await store.createJob({ id: 'a', name: 'a', user: 'u', spec }, 'u');
  let step = 0;
  for (const [replicas, local_bsz] of steps) {
    const [time, sync] = base.throughput([replicas], local_bsz);
    // At the initial batch: the key's gradient statistics at the start of training are the first
    // reported, and the reversed order below changes only the order of the points.
    const [sqr, variance] = base.gradStats(base.init_batch_size, 0);
    step += 1;
    // The mixed-type simulator's record of the measurement (HeteroJob.observe).
    const point = {
      num_nodes: 1,
      num_replicas: replicas,
      local_bsz,
      accum_step_time_s: time - sync,
      optim_step_time_s: time,
    };
    profiles.add(base.name, 'cpu', point);
    profiles.setStartGrad(base.name, [sqr, variance]);
    await report('a', step, base.limits, {
      replicas,
      local_bsz,
      step_s: time,
      sync_s: sync,
      sqr,
      variance,
      samples: step * 1000,
    });
  }
  await stop();
  await store.createJob({ id: 'b', name: 'b', user: 'u', spec }, 'u');
  const b = (await store.getJob('b'))!;
  const [input] = await typedInputs(
    { store, machines: [node], types: TYPES, profiles: book, own_profiles: await book.forRound([b]) },
    [b],
    [b],
  );
  const control = typedView(jobTypes(input!, TYPES));
  const job = new HeteroJob({ name: 'b', app: heteroApp(), submit_s: 0, pooled: false, profiles });
  const sim = typedView(heteroPolicyJob(job, TYPES, 'models').per_type!);
  return { sim, control };
}

describe('the mixed-type simulator and the control plane build the same typed policy job', () => {
  const steps = [
    [1, 128],
    [2, 128],
    [4, 256],
    [2, 192],
  ] as const;

  it('a job of a key that another job measured on one type: the same model, limits, sizes and one-GPU rates per type', async () => {
    const { sim, control } = await both(steps);
    assert.ok(sim[0]!.model?.correction, 'a model on the measured type, corrected by its measurements');
    assert.equal(sim[1]!.model, undefined, 'none where nobody measured');
    assert.deepStrictEqual(sim, control);
  });

  it('the same whatever order the measurements came in (the fit is in configuration order)', async () => {
    const forward = await both(steps);
    const reversed = await both([...steps].reverse());
    assert.deepStrictEqual(reversed.sim, forward.sim);
    assert.deepStrictEqual(reversed.control, forward.control);
  });
});
