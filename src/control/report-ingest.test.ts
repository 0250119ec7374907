import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendNode } from '../backends/backend.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { JobSpec } from '../store/types.js';
import { ProfileBook } from './profile-book.js';
import { ReportIngest } from './report-ingest.js';

const node: BackendNode = { name: 'local', address: '127.0.0.1', usable: 2, note: '', devices: [0, 1].map((index) => ({ index, kind: 'cpu' as const, name: `cpu-slot-${index}` })) };
const spec: JobSpec = { name: 'j', command: ['python3', 'train.py'], workdir: '/', env: {}, min_replicas: 0, max_replicas: 2, max_restarts: 0, preemptible: true, priority: 0, profile: 'train' };
const limits = { init_batch_size: 64, max_batch_size: 1024, min_local_bsz: 16, max_local_bsz: 256, accumulation: true };
const measurement = (step: number, step_time_s: number) => ({
  time_s: 1e9 + step, step, epoch: 0, num_nodes: 1, num_replicas: 1, local_bsz: 64, accum_steps: 0,
  step_time_s, sync_time_s: 0, grad_sqr: 1, grad_var: 20, samples: step * 64, remaining_samples: 64_000 - step * 64, loss: 1,
});

describe('ReportIngest', () => {
  it('an ended job\'s last measurements reach its key\'s profile: a slow start does not stay the profile', async () => {
    const store = new SqliteStore(':memory:');
    let now_ms = 0;
    const profiles = new ProfileBook(store, () => [node], () => {});
    const ingest = new ReportIngest({ store, refit_interval_s: 5, now_ms: () => now_ms, log: () => {}, request_round: () => {}, profiles });
    await store.createJob({ id: 'a', name: 'a', user: 'u', spec }, 'u');
    // A first step slowed 25x (a loaded machine, a cold cache), then the job's real speed.
    await ingest.report({ job_id: 'a', attempt: 0, limits, reports: [measurement(1, 0.02)] });
    const profileStep_s = async () => (await store.getKeyProfile('train', 'cpu'))!.points[0]!.optim_step_time_s;
    assert.equal(await profileStep_s(), 0.02, 'the first report is merged at the job\'s first fit');
    now_ms = 1000; // within the refit interval: stored, not yet merged
    await ingest.report({ job_id: 'a', attempt: 0, limits, reports: Array.from({ length: 19 }, (_, i) => measurement(i + 2, 0.0008)) });
    await ingest.stop();
    assert.equal(await profileStep_s(), 0.02);
    await ingest.finalRefit('a');
    const mean_s = (0.02 + 19 * 0.0008) / 20;
    assert.ok(Math.abs(await profileStep_s() - mean_s) < 1e-9, `the profile holds the job's mean over all its reports, ${mean_s} s`);
  });
});
