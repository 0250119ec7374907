/** The part of the Store conformance suite about profile keys; run by `storeConformance`. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { assertNewestReported } from './conformance-shared.js';
import { reportBatch } from './report-batch.js';
import type { Store } from './store.js';
import type { JobSpec } from './types.js';

const spec: JobSpec = {
  name: 'p',
  command: ['python3', 'train.py'],
  workdir: '/tmp',
  env: {},
  min_replicas: 0,
  max_replicas: 4,
  max_restarts: 0,
  preemptible: true,
  priority: 0,
  profile: 'train',
};
const point = (num_replicas: number, accum: number, optim: number) => ({
  num_nodes: 1,
  num_replicas,
  local_bsz: 64,
  accum_step_time_s: accum,
  optim_step_time_s: optim,
});
const limits = { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 16, max_local_bsz: 256, accumulation: true };
const perf = { alpha_c: 0.01, beta_c: 0.001, alpha_n: 1e-8, beta_n: 1e-8, alpha_r: 0.001, beta_r: 0.0001, gamma: 1.5 };

/** Registers the profile cases; `fresh` opens an empty store with the suite's clock at 1_000_000. */
export function profileConformance(fresh: () => Promise<Store>, tick: (ms: number) => void): void {
  it('merges jobs into key profiles: newest point per configuration, grad by progress, jobs counted once', async () => {
    const s = await fresh();
    assert.equal(await s.getKeyProfile('train', 'cpu'), undefined);
    assert.deepEqual(await s.listKeyProfiles(), []);
    let p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'a',
      points: [point(1, 0.1, 0.12)],
      grad: [{ progress: 0, sqr: 1, var: 4 }],
      limits,
    });
    assert.deepEqual(
      [p.jobs, p.max_measured_replicas, p.perf, p.limits, p.job_ids, p.updated_at_ms],
      [1, 1, null, limits, ['a'], 1_000_000],
    );
    tick(10);
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'a',
      points: [point(1, 0.11, 0.13), point(4, 0.1, 0.2)],
      grad: [
        { progress: 0.5, sqr: 0.5, var: 5 },
        { progress: 1.5, sqr: 0.25, var: 6 },
      ],
      limits: null,
    });
    assert.equal(p.jobs, 1, 'the same job counts once');
    assert.deepEqual(p.points, [point(1, 0.11, 0.13), point(4, 0.1, 0.2)], 'first-seen order, newest values');
    assert.deepEqual(
      p.grad,
      [
        { progress: 0, sqr: 1, var: 4 },
        { progress: 0.5, sqr: 0.5, var: 5 },
        { progress: 1, sqr: 0.25, var: 6 },
      ],
      'sorted, clamped to [0, 1]',
    );
    assert.deepEqual(p.limits, limits, 'null keeps the limits');
    assert.equal(p.max_measured_replicas, 4);
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'b',
      points: [point(4, 0.2, 0.3)],
      grad: [{ progress: 0, sqr: 2, var: 2 }],
      limits: null,
    });
    assert.deepEqual(
      [p.jobs, p.job_ids, p.points.length, p.points[1], p.grad[0]],
      [2, ['a', 'b'], 2, point(4, 0.2, 0.3), { progress: 0, sqr: 2, var: 2 }],
    );
    await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'NVIDIA H100 80GB HBM3',
      job_id: 'c',
      points: [point(2, 0.01, 0.02)],
      grad: [],
      limits: null,
    });
    await s.mergeKeyProfile({ key: 'bert', gpu_type: 'cpu', job_id: 'd', points: [], grad: [], limits: null });
    assert.deepEqual(
      (await s.listKeyProfiles()).map((k) => [k.key, k.gpu_type, k.jobs]),
      [
        ['bert', 'cpu', 1],
        ['train', 'NVIDIA H100 80GB HBM3', 1],
        ['train', 'cpu', 2],
      ],
    );
    assert.deepEqual(
      (await s.listKeyProfiles('train')).map((k) => k.gpu_type),
      ['NVIDIA H100 80GB HBM3', 'cpu'],
    );
    assert.equal(await s.saveKeyProfilePerf('train', 'cpu', perf), true);
    assert.equal(await s.saveKeyProfilePerf('nope', 'cpu', perf), false);
    assert.deepEqual((await s.getKeyProfile('train', 'cpu'))!.perf, perf);
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'b',
      points: [point(2, 0.1, 0.1)],
      grad: [],
      limits: null,
    });
    assert.deepEqual(p.perf, perf, 'a merge keeps the fitted parameters until the next fit');

    assert.equal(await s.deleteKeyProfile('train', 'cpu'), true);
    assert.equal(await s.deleteKeyProfile('train', 'cpu'), false, 'gone');
    assert.equal(await s.getKeyProfile('train', 'cpu'), undefined);
    assert.deepEqual(
      (await s.listKeyProfiles()).map((k) => [k.key, k.gpu_type]),
      [
        ['bert', 'cpu'],
        ['train', 'NVIDIA H100 80GB HBM3'],
      ],
      'other GPU types and keys stay',
    );
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'a',
      points: [point(8, 0.3, 0.4)],
      grad: [],
      limits: null,
    });
    assert.deepEqual(
      [p.jobs, p.job_ids, p.points, p.grad, p.perf, p.limits, p.max_measured_replicas],
      [1, ['a'], [point(8, 0.3, 0.4)], [], null, null, 8],
      'the next merge starts anew: nothing of the removed profile is left',
    );
    await s.close();
  });

  it("keeps the model parameter count: a job's newest reported one, a profile's newest merged one", async () => {
    const s = await fresh();
    const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    await assertNewestReported(s, created, 'model_parameters', [11_200_000, undefined, null], 11_200_000);

    let p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'a',
      points: [point(1, 0.1, 0.12)],
      grad: [],
      limits: null,
    });
    assert.equal('model_parameters' in p, false, 'absent until a merge has it');
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'a',
      points: [point(1, 0.1, 0.12)],
      grad: [],
      limits: null,
      model_parameters: 11_200_000,
    });
    assert.equal(p.model_parameters, 11_200_000, 'a merge with it stores it');
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'b',
      points: [point(2, 0.1, 0.15)],
      grad: [],
      limits: null,
    });
    assert.equal(p.model_parameters, 11_200_000, 'a merge without it keeps it');
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'b',
      points: [point(2, 0.1, 0.15)],
      grad: [],
      limits: null,
      model_parameters: 0,
    });
    assert.equal(p.model_parameters, 11_200_000, 'nor does a count <= 0 replace it');
    p = await s.mergeKeyProfile({
      key: 'train',
      gpu_type: 'cpu',
      job_id: 'c',
      points: [],
      grad: [],
      limits: null,
      model_parameters: 25_600_000,
    });
    assert.equal(p.model_parameters, 25_600_000, 'the newest count replaces it');
    assert.equal((await s.getKeyProfile('train', 'cpu'))!.model_parameters, 25_600_000, 'persisted');
    assert.equal((await s.listKeyProfiles())[0]!.model_parameters, 25_600_000);
    await s.deleteKeyProfile('train', 'cpu');
    p = await s.mergeKeyProfile({ key: 'train', gpu_type: 'cpu', job_id: 'd', points: [], grad: [], limits: null });
    assert.equal(p.model_parameters, undefined, "a removed profile's count is gone with it");
    await s.close();
  });

  it('records how a job uses its profile once, with its event; a discarded profile stays discarded', async () => {
    const s = await fresh();
    const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    assert.equal(created.profile_use, null);
    assert.equal(
      await s.setProfileUse('j', 'used', 'scheduler', 'starts from the profile of train', { jobs: 1 }),
      true,
    );
    assert.equal(await s.setProfileUse('j', 'used', 'scheduler', 'again', {}), false);
    assert.equal((await s.getJob('j'))!.profile_use, 'used');
    assert.equal(
      await s.setProfileUse('j', 'discarded', 'scheduler', 'measured 2x slower than the profile predicts', {
        error: 1,
      }),
      true,
    );
    assert.equal(await s.setProfileUse('j', 'used', 'scheduler', 'no way back', {}), false);
    assert.equal((await s.getJob('j'))!.profile_use, 'discarded');
    const events = (await s.listEvents('j')).slice(1);
    assert.deepEqual(
      events.map((e) => [e.kind, e.from_state, e.to_state, e.reason, e.data]),
      [
        ['profile-used', 'queued', 'queued', 'starts from the profile of train', { jobs: 1 }],
        ['profile-discarded', 'queued', 'queued', 'measured 2x slower than the profile predicts', { error: 1 }],
      ],
    );
    await assert.rejects(
      s.setProfileUse('nope', 'used', 'x', 'y', {}),
      (e: unknown) => e instanceof GoodputError && e.code === 'E_NOT_FOUND',
    );
    await s.close();
  });
  it("saves a refit in one transaction: the job's fit, its profile use, the merged (or replaced) profile and its fit", async () => {
    const s = await fresh();
    await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    await s.createJob({ id: 'k', name: 'k', user: 'u', spec }, 'u');
    const update = (job_id: string, replicas: number) => ({
      key: 'train',
      gpu_type: 'cpu',
      job_id,
      points: [point(replicas, 0.1, 0.2)],
      grad: [],
      limits,
    });
    await assert.rejects(
      s.saveRefit({ job_id: 'nope', perf, correction: null, profile: { update: update('nope', 1), perf } }),
      (e: unknown) => e instanceof GoodputError && e.code === 'E_NOT_FOUND',
    );
    assert.equal(
      await s.getKeyProfile('train', 'cpu'),
      undefined,
      'a refused refit writes nothing, its profile merge included',
    );
    const merged = await s.saveRefit({
      job_id: 'j',
      perf,
      correction: null,
      profile: { update: update('j', 1), perf: { ...perf, gamma: 2 } },
    });
    assert.deepEqual([merged!.job_ids, merged!.points.length, merged!.perf!.gamma], [['j'], 1, 2]);
    assert.deepEqual(await s.getKeyProfile('train', 'cpu'), merged, 'what it returns is what is stored');
    assert.equal((await s.getJob('j'))!.perf!.gamma, 1.5);
    const discarded = await s.saveRefit({
      job_id: 'k',
      perf,
      correction: null,
      discard: { reason: 'off by 60%', data: { error: 0.6 } },
    });
    assert.equal(discarded, undefined);
    assert.equal((await s.getJob('k'))!.profile_use, 'discarded');
    await s.saveRefit({ job_id: 'k', perf, correction: null, discard: { reason: 'again', data: {} } });
    assert.deepEqual(
      (await s.listEvents('k')).filter((e) => e.kind === 'profile-discarded').map((e) => [e.reason, e.data]),
      [['off by 60%', { error: 0.6 }]],
      'recorded once',
    );
    const replaced = await s.saveRefit({
      job_id: 'k',
      perf,
      correction: null,
      profile: { update: update('k', 2), perf, replaced: { reason: 'held only j', data: { replaced_job: 'j' } } },
    });
    assert.deepEqual(
      [replaced!.job_ids, replaced!.points.map((q) => q.num_replicas)],
      [['k'], [2]],
      'the old profile is gone whole',
    );
    assert.deepEqual(
      (await s.listEvents('k')).filter((e) => e.kind === 'profile-replaced').map((e) => e.data),
      [{ replaced_job: 'j' }],
    );
    await s.close();
  });

  it("keeps a job's measurements per GPU type of the attempt that made them; unknown type counts for every type", async () => {
    const s = await fresh();
    await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    const replica = (gpu_type?: string) => ({
      rank: 0,
      device: 0,
      node: 'n',
      launch_id: '',
      pid: 1,
      proc_start: '',
      log_path: '',
      started_at_ms: 0,
      ...(gpu_type ? { gpu_type } : {}),
    });
    const m = (step: number, step_time_s: number) => ({
      time_s: step,
      step,
      num_nodes: 1,
      num_replicas: 1,
      local_bsz: 64,
      accum_steps: 0,
      step_time_s,
      sync_time_s: 0,
      grad_sqr: 1,
      grad_var: 2,
    });
    await s.assignJob('j', { allocation: [0], devices: [0] }, 0, 's', 'r');
    await s.launchJob('j', [replica('t4')], 'b', 'r');
    assert.equal((await s.listReplicas('j', 0))[0]!.gpu_type, 't4');
    assert.equal((await s.addReports(reportBatch('j', 0, limits, [m(1, 0.8), m(2, 0.8)]))).new_configuration, true);
    await s.stopJob('j', { allocation: [1], devices: [0] }, 'rescale', 's', 'move');
    await s.relaunchJob('j', 0, 's', 'r');
    await s.launchJob('j', [replica('a100')], 'b', 'r');
    const added = await s.addReports(reportBatch('j', 1, limits, [m(3, 0.1)]));
    assert.equal(added.new_configuration, true, 'the same configuration on another type is new');
    const rows = await s.getProfile('j');
    assert.deepEqual(
      rows.map((r) => [r.gpu_type, r.num_replicas, r.count]),
      [
        ['a100', 1, 1],
        ['t4', 1, 2],
      ],
    );
    assert.deepEqual(
      (await s.getProfile('j', 'a100')).map((r) => [r.gpu_type, r.optim_step_time_s]),
      [['a100', 0.1]],
      'no t4 point',
    );
    assert.deepEqual(
      (await s.getProfile('j', 't4')).map((r) => [r.gpu_type, r.count]),
      [['t4', 2]],
    );
    await s.stopJob('j', { allocation: [0], devices: [0] }, 'rescale', 's', 'move');
    await s.relaunchJob('j', 0, 's', 'r');
    await s.launchJob('j', [replica()], 'b', 'r');
    assert.equal((await s.listReplicas('j', 2))[0]!.gpu_type, undefined);
    await s.addReports(reportBatch('j', 2, limits, [m(4, 0.5)]));
    assert.deepEqual(
      (await s.getProfile('j', 'a100')).map((r) => r.gpu_type),
      ['', 'a100'],
      'a replica of unknown type measured for every type',
    );
    await s.close();
  });
}
