import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { controlDriver, cpuNodeFixture, trainingReport } from '../testing/control-driver.js';
import { trainSpecFixture } from '../../store/job-fixture.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { optimFactor, stepCorrection } from '../../goodput/step-correction.js';
import { optimStepTime_s } from '../../goodput/throughput.js';
import { ownProfilePoints } from './report-ingest.js';
import { modelOf } from '../loop/snapshot.js';

const node = cpuNodeFixture(2);
const spec = trainSpecFixture({ max_replicas: 2 });
const limits = { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 16, max_local_bsz: 256, accumulation: true };
const measurement = (step: number, step_time_s: number) => trainingReport(step, step_time_s);

// The key's profiles are read by their stored key: shared (one per key), as with --shared-profiles.
describe('ReportIngest', () => {
  it("an ended job's last measurements reach its key's profile: a slow start does not stay the profile", async () => {
    let now_ms = 0;
    const { store, ingest } = controlDriver({ nodes: [node], refit_interval_s: 5, shared: true, now_ms: () => now_ms });
    await store.createJob({ id: 'a', name: 'a', user: 'u', spec }, 'u');
    // A first step slowed 25x (a loaded machine, a cold cache), then the job's real speed.
    await ingest.report({ job_id: 'a', attempt: 0, limits, reports: [measurement(1, 0.02)] });
    const profileStep_s = async () => (await store.getKeyProfile('train', 'cpu'))!.points[0]!.optim_step_time_s;
    assert.equal(await profileStep_s(), 0.02, "the first report is merged at the job's first fit");
    now_ms = 1000; // within the refit interval: stored, not yet merged
    await ingest.report({
      job_id: 'a',
      attempt: 0,
      limits,
      reports: Array.from({ length: 19 }, (_, i) => measurement(i + 2, 0.0008)),
    });
    await ingest.stop();
    assert.equal(await profileStep_s(), 0.02);
    await ingest.finalRefit((await store.getJob('a'))!, true);
    const mean_s = (0.02 + 19 * 0.0008) / 20;
    assert.ok(
      Math.abs((await profileStep_s()) - mean_s) < 1e-9,
      `the profile holds the job's mean over all its reports, ${mean_s} s`,
    );
  });

  it('a job that discarded a profile only one job measured replaces it when it succeeds; one that failed does not', async () => {
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const { store, ingest } = controlDriver({ nodes: [node], refit_interval_s: 5, shared: true, log });
    const run = async (id: string, step_time_s: number) => {
      await store.createJob({ id, name: id, user: 'u', spec }, 'u');
      await ingest.report({
        job_id: id,
        attempt: 0,
        limits,
        reports: [measurement(1, step_time_s), measurement(2, step_time_s)],
      });
      await ingest.stop();
      return (await store.getJob(id))!;
    };
    await run('slow', 0.02); // the key's only job, measured 25x slower than the model really runs
    const failed = await run('f', 0.0008);
    assert.equal(failed.profile_use, 'discarded');
    await ingest.finalRefit(failed, false);
    assert.deepEqual((await store.getKeyProfile('train', 'cpu'))!.job_ids, ['slow'], 'a failed job replaces nothing');
    const good = await run('g', 0.0008);
    assert.equal(good.profile_use, 'discarded');
    await ingest.finalRefit(good, true);
    const replaced = (await store.getKeyProfile('train', 'cpu'))!;
    assert.deepEqual([replaced.job_ids, replaced.points[0]!.optim_step_time_s], [['g'], 0.0008]);
    const event = (await store.listEvents('g')).find((e) => e.kind === 'profile-replaced')!;
    assert.match(
      event.reason,
      /profile of 'train' on cpu replaced by this job's measurements: it held only those of job slow, which this job's disagreed with/,
    );
    assert.equal(lines.filter((l) => /replaced/.test(l)).length, 1);
    // The next job of the key agrees with it and confirms it; a later outlier replaces nothing.
    assert.equal((await run('h', 0.0009)).profile_use, null);
    assert.deepEqual((await store.getKeyProfile('train', 'cpu'))!.job_ids, ['g', 'h']);
    const outlier = await run('o', 0.03);
    assert.equal(outlier.profile_use, 'discarded');
    await ingest.finalRefit(outlier, true);
    assert.deepEqual(
      (await store.getKeyProfile('train', 'cpu'))!.job_ids,
      ['g', 'h'],
      'a profile two jobs agreed on stays',
    );
  });

  it("the model parameter count a job reports reaches its key's profile; the newest job's count wins", async () => {
    const { store, ingest } = controlDriver({ nodes: [node], refit_interval_s: 5, shared: true });
    const parameters = async () => (await store.getKeyProfile('train', 'cpu'))!.model_parameters;
    const run = async (id: string, model_parameters?: number) => {
      await store.createJob({ id, name: id, user: 'u', spec }, 'u');
      const reports = [measurement(1, 0.01), measurement(2, 0.01)].map((m) =>
        model_parameters === undefined ? m : { ...m, model_parameters },
      );
      await ingest.report({ job_id: id, attempt: 0, limits, reports });
      await ingest.stop();
      await ingest.finalRefit((await store.getJob(id))!, true);
    };
    await run('a', 11_181_642);
    assert.equal((await store.getJob('a'))!.model_parameters, 11_181_642, 'kept with the job');
    assert.equal(await parameters(), 11_181_642, "merged into its key's profile");
    await run('b');
    assert.equal(await parameters(), 11_181_642, "a job that does not report it keeps the profile's");
    await run('c', 23_520_842);
    assert.equal(await parameters(), 23_520_842, 'a newer count replaces it');
    assert.deepEqual((await store.getKeyProfile('train', 'cpu'))!.job_ids, ['a', 'b', 'c']);
  });

  it('with profiles, a refit saves the correction of the fit by the measurements it was made on, and the model of a job with no profile uses it', async () => {
    const store = new SqliteStore(':memory:');
    // Two replicas on one node, at two local batches: the measured times are not on the seven-parameter curve.
    const at = (step: number, local_bsz: number, step_time_s: number) => ({
      ...measurement(step, step_time_s),
      num_replicas: 2,
      local_bsz,
      sync_time_s: step_time_s / 2,
    });
    const run = async (id: string, with_profiles = false) => {
      const { ingest } = controlDriver({
        store,
        nodes: [node],
        refit_interval_s: 5,
        shared: true,
        without_profiles: !with_profiles,
      });
      await store.createJob({ id, name: id, user: 'u', spec: { ...spec, profile: id } }, 'u');
      await ingest.report({
        job_id: id,
        attempt: 0,
        limits,
        reports: [measurement(1, 0.01), at(2, 64, 0.05), at(3, 128, 0.03)],
      });
      await ingest.stop();
      return (await store.getJob(id))!;
    };
    const plain = await run('pollux-like');
    assert.ok(
      plain.perf && plain.correction === null,
      'a policy without profiles keeps the plain fit, as in the simulator',
    );
    const job = await run('a', true);
    assert.ok(job.perf && job.correction, 'saved with the fit');
    assert.deepEqual(job.correction, stepCorrection(job.perf, await ownProfilePoints(store, 'a')));
    const model = modelOf(job)!;
    assert.deepEqual(model.correction, job.correction, "no profile: the job's own measurements correct its model");
    const tput = (local_bsz: number) =>
      (2 * local_bsz) /
      (optimStepTime_s(model.perf, 1, 2, local_bsz) * optimFactor(model.correction!, 1, 2, local_bsz));
    for (const [local_bsz, step_time_s] of [
      [64, 0.05],
      [128, 0.03],
    ] as const) {
      assert.ok(
        Math.abs(tput(local_bsz) - (2 * local_bsz) / step_time_s) < 1e-6 * tput(local_bsz),
        `2 replicas at local batch ${local_bsz} predicted as measured`,
      );
    }
  });

  it("a refit fits the points once: the key's profile keeps the fit of the job that merged into it", async () => {
    const { store, ingest } = controlDriver({ nodes: [node], refit_interval_s: 5, shared: true });
    const at = (step: number, replicas: number, local_bsz: number, step_time_s: number) => ({
      ...measurement(step, step_time_s),
      num_replicas: replicas,
      local_bsz,
      sync_time_s: step_time_s / 4,
    });
    const run = async (id: string, reports: ReturnType<typeof at>[]) => {
      await store.createJob({ id, name: id, user: 'u', spec }, 'u');
      await ingest.report({ job_id: id, attempt: 0, limits, reports });
      await ingest.stop();
      return (await store.getJob(id))!;
    };
    await run('a', [at(1, 1, 64, 0.02), at(2, 2, 64, 0.025)]);
    // Its own points first, the profile's after them: the order the profile keeps them in differs.
    const b = await run('b', [at(1, 2, 128, 0.04), at(2, 1, 128, 0.035)]);
    const profile = (await store.getKeyProfile('train', 'cpu'))!;
    assert.deepEqual(profile.job_ids, ['a', 'b']);
    assert.deepEqual(profile.perf, b.perf, "one fit of the merged points, the job's and the profile's");
  });
});
