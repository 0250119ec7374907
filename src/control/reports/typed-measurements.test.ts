import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendNode } from '../../backends/backend.js';
import { controlDriver, trainingReport } from '../testing/control-driver.js';
import { trainSpecFixture } from '../../store/job-fixture.js';
import { fitType, ownProfilePoints, type ReportIngest } from './report-ingest.js';

const gpuNode = (name: string, type: string): BackendNode => ({
  name,
  address: name,
  usable: 2,
  note: '',
  devices: [0, 1].map((index) => ({ index, kind: 'gpu' as const, name: type })),
});
const nodes = [gpuNode('gp1', 'a100'), gpuNode('gp2', 't4')];
const spec = trainSpecFixture({ max_replicas: 2 });
const limits = { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 16, max_local_bsz: 256, accumulation: true };
const measurement = (step: number, num_replicas: number, step_time_s: number) =>
  trainingReport(step, step_time_s, { num_replicas, sync_time_s: step_time_s / 4 });
const replica = (rank: number, node: string, gpu_type: string) => ({
  rank,
  device: rank,
  node,
  launch_id: '',
  pid: 0,
  proc_start: '',
  log_path: '',
  started_at_ms: 0,
  gpu_type,
});

/** A store, its profile book and report path on a cluster of one a100 node and one t4 node, as the controller wires them. */
function setup() {
  const { store, ingest } = controlDriver({ nodes, refit_interval_s: 5, shared: true, typed: true });
  return { store, ingest };
}

/** Lets the refit that a report scheduled after its answer run, then stops the report path. */
async function settle(ingest: ReportIngest): Promise<void> {
  await new Promise((done) => setTimeout(done, 20));
  await ingest.stop();
}

const a100Reports = [measurement(10, 1, 0.1), measurement(11, 1, 0.1)];

describe('measurements per (job, GPU type)', () => {
  it('a job measured on t4 then moved to a100: its a100 fit and the a100 profile hold no t4 point', async () => {
    const { store, ingest } = setup();
    await store.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    await store.assignJob('j', { allocation: [1, 1], devices: [0, 1] }, 0, 's', 'on t4');
    await store.launchJob('j', [replica(0, 'gp2', 't4'), replica(1, 'gp2', 't4')], 'b', 'r');
    await ingest.report({ job_id: 'j', attempt: 0, limits, reports: [measurement(1, 2, 0.8), measurement(2, 2, 0.8)] }); // the first fit is awaited
    assert.deepEqual(
      (await store.getKeyProfile('train', 't4'))!.points.map((p) => p.num_replicas),
      [2],
    );
    await store.stopJob('j', { allocation: [0], devices: [0] }, 'rescale', 's', 'move to a100');
    await store.relaunchJob('j', 0, 's', 'r');
    await store.launchJob('j', [replica(0, 'gp1', 'a100')], 'b', 'r');
    assert.equal(
      await fitType(store, { id: 'j' }, 'a100'),
      't4',
      'moved, not yet measured on a100: its fit is of t4 (the policy models it so)',
    );
    await ingest.report({ job_id: 'j', attempt: 1, limits, reports: a100Reports });
    await settle(ingest);
    assert.equal(await fitType(store, { id: 'j' }, 'a100'), 'a100');
    const a100 = (await store.getKeyProfile('train', 'a100'))!;
    assert.deepEqual(
      a100.points.map((p) => [p.num_replicas, p.optim_step_time_s]),
      [[1, 0.1]],
      'the a100 profile has only what was measured on a100',
    );
    assert.deepEqual(
      (await store.getKeyProfile('train', 't4'))!.points.map((p) => p.num_replicas),
      [2],
      'the t4 profile keeps the t4 point',
    );
    assert.deepEqual(
      (await ownProfilePoints(store, 'j', 'a100')).map((p) => p.num_replicas),
      [1],
    );
    // The same job's fit from its a100 measurements alone, in a store that never saw t4.
    const alone = setup();
    await alone.store.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'u');
    await alone.store.assignJob('j', { allocation: [0], devices: [0] }, 0, 's', 'on a100');
    await alone.store.launchJob('j', [replica(0, 'gp1', 'a100')], 'b', 'r');
    await alone.ingest.report({ job_id: 'j', attempt: 0, limits, reports: a100Reports });
    await alone.ingest.stop(); // its first fit is awaited
    assert.deepEqual(
      (await store.getJob('j'))!.perf,
      (await alone.store.getJob('j'))!.perf,
      'its a100 fit is that of its a100 points only',
    );
  });
});
