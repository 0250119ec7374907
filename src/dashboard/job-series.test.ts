/**
 * Issue 52: the replicas chart stayed at 1 through a 74 s preemption and throughput was drawn
 * across it. A stop between attempts is 0 replicas and a gap in the rates.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measuredStepFixture } from '../goodput/testing/perf-fixture.js';
import type { Measurement } from '../store/types.js';
import { jobSeries } from './job-metrics.js';

const report = (time_s: number, attempt: number, num_replicas = 1): Measurement & { attempt: number } =>
  measuredStepFixture({ time_s, step: Math.round(time_s), num_replicas, step_time_s: 0.5, attempt });

describe('jobSeries', () => {
  it('a 74 s preemption between attempts: replicas drop to 0, throughput is not drawn across it', () => {
    const s = jobSeries([report(100, 0), report(101, 0), report(175, 1), report(176, 1)], 32);
    assert.deepEqual(s.t_ms, [100_000, 101_000, 101_001, 175_000, 176_000]);
    assert.deepEqual(s.replicas, [1, 1, 0, 1, 1]);
    assert.deepEqual(s.throughput, [64, 64, null, 64, 64]);
    assert.deepEqual(s.batch_size, [32, 32, null, 32, 32]);
  });
  it('a job not running now ends at 0 replicas; a running one does not', () => {
    assert.deepEqual(jobSeries([report(100, 0)], 32, false).replicas, [1, 0]);
    assert.deepEqual(jobSeries([report(100, 0)], 32, true).replicas, [1]);
    assert.deepEqual(jobSeries([], 32, false).replicas, []);
  });
  it('a long silence within one attempt is a gap in the rates, its replicas unchanged', () => {
    const s = jobSeries([report(100, 0, 2), report(101, 0, 2), report(102, 0, 2), report(200, 0, 2)], 32);
    assert.deepEqual(s.replicas, [2, 2, 2, 2, 2]);
    assert.deepEqual(s.throughput, [128, 128, 128, null, 128]);
  });
  it('false friends: a resize within reports of one attempt, and steady reports, draw no gap', () => {
    const s = jobSeries([report(100, 0, 1), report(101, 0, 2), report(120, 0, 2)], 32);
    assert.deepEqual(s.replicas, [1, 2, 2]);
    assert.ok(!s.throughput.includes(null));
  });
});
