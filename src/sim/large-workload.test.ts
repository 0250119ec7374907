/**
 * The simulator's whole-workload arithmetic at the size of a day on 16,384 GPUs (122,880 jobs,
 * bench:scale): no Math.max(...) spread, which overflows the stack past about 120,000 values.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarize } from './metrics.js';
import { latestSubmission, type SimResult } from './simulator.js';

const N = 200_000;

describe('a workload of 200,000 jobs', () => {
  it('latestSubmission finds the last arrival', () => {
    const jobs = Array.from({ length: N }, (_, i) => ({ submit_s: (i * 7919) % N }));
    assert.equal(latestSubmission(jobs), N - 1);
    assert.equal(latestSubmission([]), -Infinity);
  });

  it('summarize gives the makespan', () => {
    const result: SimResult = {
      policy: 'fifo',
      mode: 'gang',
      total_gpus: 16_384,
      rounds: 1,
      jobs: Array.from({ length: N }, (_, i) => ({
        name: `j${i}`,
        application: 'cifar10',
        submit_s: i,
        jct_s: 100,
        restarts: 0,
        attained_gpu_s: 100,
        avg_active_jobs: 1,
      })),
    };
    const m = summarize(result);
    assert.equal(m.num_jobs, N);
    assert.equal(m.avg_jct_s, 100);
  });
});
