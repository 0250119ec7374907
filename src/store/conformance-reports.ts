/**
 * The part of the Store conformance suite about training reports: the per-configuration profile,
 * the latest statistics, the checkpoint facts a preemption prices, and refusals of reports a job
 * cannot take; run by `storeConformance`.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertNewestReported, conformanceSpec as spec, isCode } from './conformance-shared.js';
import { reportBatch } from './report-batch.js';
import type { ReportsAdded, Store } from './store.js';
import { limitsFixture, measuredStepFixture } from '../goodput/testing/perf-fixture.js';

/** Registers the cases; `fresh` opens an empty store with the suite's clock. */
export function reportConformance(fresh: () => Promise<Store>): void {
  it('stores reports, aggregates the profile per configuration and keeps the latest stats', async () => {
    const s = await fresh();
    const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    const limits = limitsFixture({ max_local_bsz: 1024 });
    const m = measuredStepFixture({
      time_s: 1,
      num_replicas: 2,
      local_bsz: 64,
      sync_time_s: 0.05,
      grad_sqr: 0.5,
      grad_var: 1.5,
    });
    let added = await s.addReports(
      reportBatch('j', 0, limits, [
        { ...m, step: 1, step_time_s: 0.25, samples: 128 },
        { ...m, step: 2, step_time_s: 0.35, samples: 256, grad_sqr: null, grad_var: null },
      ]),
    );
    assert.equal(added.new_configuration, true);
    assert.equal(added.job.step, 2);
    assert.equal(added.job.samples, 256);
    assert.deepEqual(added.job.grad, { sqr: 0.5, var: 1.5 });
    assert.deepEqual(added.job.limits, limits);
    added = await s.addReports(
      reportBatch('j', 0, undefined, [{ ...m, step: 3, step_time_s: 0.3, accum_steps: 1, samples: 512 }]),
    );
    assert.equal(added.new_configuration, false);
    assert.deepEqual(added.job.limits, limits, 'limits kept when omitted');
    const [row] = await s.getProfile('j');
    assert.equal(row!.count, 3);
    // accum = (step - sync) / (a + 1): 0.2, 0.3, 0.125 -> mean 0.208333; optim = step - a * accum: 0.25, 0.35, 0.175
    assert.ok(Math.abs(row!.accum_step_time_s - 0.625 / 3) < 1e-12);
    assert.ok(Math.abs(row!.optim_step_time_s - 0.775 / 3) < 1e-12);
    assert.deepEqual(
      (await s.listReports('j')).map((r) => r.step),
      [1, 2, 3],
    );
    assert.deepEqual(
      (await s.listReports('j', 2)).map((r) => r.step),
      [2, 3],
    );
    await assert.rejects(
      s.addReports(reportBatch('nope', 0, undefined, [{ ...m, step: 1, step_time_s: 1 }])),
      isCode('E_NOT_FOUND'),
    );
    const batch = await s.addReportBatches([
      reportBatch('nope', 0, undefined, [{ ...m, step: 9, step_time_s: 1 }]),
      reportBatch('j', 0, undefined, [{ ...m, step: 4, step_time_s: 0.3, num_replicas: 3 }]),
    ]);
    assert.ok(isCode('E_NOT_FOUND')(batch[0]), 'an unknown job is an error value');
    assert.equal((batch[1] as { job: { step: number } }).job.step, 4, 'and does not affect other batches');
    assert.equal((batch[1] as { new_configuration: boolean }).new_configuration, true);
    assert.equal((await s.listReports('j')).length, 4);
    const perf = {
      alpha_c: 0.1,
      beta_c: 0.01,
      alpha_n: 1e-8,
      beta_n: 1e-8,
      alpha_r: 0.01,
      beta_r: 0.001,
      gamma: 1.5,
    };
    const correction = {
      compute: [{ local_bsz: 32, factor: 1.1 }],
      shapes: [{ num_nodes: 1, num_replicas: 3, by_batch: [{ local_bsz: 32, factor: 0.8 }] }],
    };
    assert.equal(created.correction, null, 'no correction before the first fit');
    assert.equal(await s.saveRefit({ job_id: 'j', perf, correction }), undefined, 'no profile without one');
    assert.equal((await s.getJob('j'))!.perf!.gamma, 1.5);
    assert.deepEqual((await s.getJob('j'))!.correction, correction, 'the correction is kept with the fit');
    await s.saveRefit({ job_id: 'j', perf, correction: null });
    assert.equal((await s.getJob('j'))!.correction, null, 'and replaced with it');
    await s.close();
  });

  it('keeps the remaining samples of the newest report entry that has them', async () => {
    const s = await fresh();
    const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    await assertNewestReported(s, created, 'remaining_samples', [1000.5, 968, undefined], 968);
    const m = measuredStepFixture({ time_s: 1 });
    await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 5, remaining_samples: null }]));
    assert.equal((await s.getJob('j'))!.remaining_samples, 968, 'null (unknown) keeps the last known value');
    await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 6, remaining_samples: 0 }]));
    assert.equal((await s.getJob('j'))!.remaining_samples, 0, 'zero is a value');
    assert.deepEqual(
      (await s.listReports('j')).map((r) => r.remaining_samples),
      [undefined, 1000.5, 968, undefined, null, 0],
    );
    await s.close();
  });

  it('keeps what a preemption would cost: the newest checkpoint, whether the job checkpoints when stopped, the largest measured size', async () => {
    const s = await fresh();
    const created = await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    assert.deepEqual(
      [created.checkpoint_at_ms, created.checkpoint_on_stop, created.max_profiled_replicas],
      [null, false, 0],
    );
    const m = measuredStepFixture({ time_s: 1, num_replicas: 2 });
    let added = await s.addReports(
      reportBatch('j', 0, undefined, [
        { ...m, step: 1, checkpoint_time_s: 1000.25 },
        { ...m, step: 2, num_replicas: 1 },
      ]),
    );
    assert.deepEqual(
      [added.job.checkpoint_at_ms, added.job.checkpoint_on_stop, added.job.max_profiled_replicas],
      [1_000_250, false, 2],
    );
    [added] = (await s.addReportBatches([
      { ...reportBatch('j', 0, undefined, [{ ...m, step: 3, checkpoint_time_s: null }]), checkpoint_on_stop: true },
    ])) as [ReportsAdded];
    assert.deepEqual(
      [added.job.checkpoint_at_ms, added.job.checkpoint_on_stop],
      [1_000_250, true],
      'null keeps the last checkpoint',
    );
    const job = (await s.getJob('j'))!;
    assert.deepEqual(
      [job.checkpoint_at_ms, job.checkpoint_on_stop, job.max_profiled_replicas],
      [1_000_250, true, 2],
      'persisted',
    );
    await s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 4 }]));
    assert.equal((await s.getJob('j'))!.checkpoint_on_stop, true, 'a batch without the flag leaves it');
  });

  it('refuses (E_CONFLICT, changing nothing) reports for a job that has ended; keeps the newest step time', async () => {
    const s = await fresh();
    await s.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    const m = { time_s: 1, num_nodes: 1, num_replicas: 1, local_bsz: 32, accum_steps: 0, sync_time_s: 0 };
    const added = await s.addReports(
      reportBatch('j', 0, undefined, [
        { ...m, step: 1, step_time_s: 0.5 },
        { ...m, step: 2, step_time_s: 0.25 },
      ]),
    );
    assert.equal(added.job.last_step_time_s, 0.25);
    assert.equal((await s.getJob('j'))!.last_step_time_s, 0.25);
    // A batch invalid for the stored job (core/report-issues.ts: more replicas than its spec allows).
    const [refused, other] = await s.addReportBatches([
      reportBatch('j', 0, undefined, [{ ...m, num_replicas: spec.max_replicas + 1, step: 5, step_time_s: 1 }]),
      reportBatch('j', 0, undefined, [{ ...m, step: 6, step_time_s: 0.25 }]),
    ]);
    assert.ok(isCode('E_BAD_REQUEST')(refused), 'an invalid batch is refused');
    assert.match((refused as Error).message, /max_replicas/);
    assert.equal((other as { job: { step: number } }).job.step, 6, 'and no other');
    assert.deepEqual(
      (await s.listReports('j')).map((r) => r.step),
      [1, 2, 6],
      'nothing of the refused batch stored',
    );
    await s.finishJob('j', 'cancelled', 'u', 'cancelled by u');
    const before = await s.getJob('j');
    await assert.rejects(
      s.addReports(reportBatch('j', 0, undefined, [{ ...m, step: 3, step_time_s: 9 }])),
      isCode('E_CONFLICT'),
    );
    const [result] = await s.addReportBatches([reportBatch('j', 0, undefined, [{ ...m, step: 4, step_time_s: 9 }])]);
    assert.ok(isCode('E_CONFLICT')(result));
    assert.deepEqual(await s.getJob('j'), before);
    assert.equal((await s.listReports('j')).length, 3);
    assert.equal((await s.getProfile('j'))[0]!.count, 3);
    await s.close();
  });
}
