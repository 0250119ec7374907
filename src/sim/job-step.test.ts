import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { advanceJob, type StepRules, type StepState } from './job-step.js';

function state(): StepState {
  return {
    current_s: 0,
    rescale_s: 0,
    progress: 0,
    epoch: 0,
    attained_gpu_s: 0,
    completion_s: null,
    local_bsz: 32,
    accum_steps: 0,
  };
}

/** A job of 2 epochs of 100 iterations each at B0 = 64, 1 s steps, no gradient noise (gain = scale). */
function rules(placement: readonly number[], observed: number[][], rate_factor = 1): StepRules {
  return {
    placement,
    init_batch_size: 64,
    completion_epoch: 1,
    progressAt: (epoch) => 100 * epoch,
    throughput: () => [1, 0.25],
    gradStats: () => [1, 0],
    rate_factor,
    observe: (n, r, b, step, sync) => observed.push([n, r, b, step, sync]),
    rebatch: () => {},
  };
}

describe('the shared job step (simulator and mixed-type simulator)', () => {
  it('charges a restart on every GPU without progress, then progresses at the gain over the step time', () => {
    const job = { ...state(), rescale_s: 30 };
    const seen: number[][] = [];
    // 2 GPUs on one node at 32 each: batch 64 = B0, gain 1, 1 iteration/s.
    advanceJob(job, 60, rules([2], seen));
    assert.equal(job.current_s, 60);
    assert.equal(job.attained_gpu_s, 120);
    assert.equal(job.rescale_s, 0);
    assert.equal(job.progress, 30);
    assert.deepEqual(seen[0], [1, 2, 32, 1, 0.25]);
  });

  it('completes at the end of the last epoch, rounded to whole seconds, and charges GPUs only until then', () => {
    const job = state();
    // rate 0.75 x 1 iteration/s: 200 iterations take 266.67 s, 133.33 s per epoch (rounded).
    advanceJob(job, 1000, rules([1, 1], [], 0.75));
    assert.equal(job.epoch, 2);
    assert.equal(job.completion_s, 133 + 133);
    assert.equal(job.attained_gpu_s, 2 * 266);
    assert.equal(job.current_s, 1000);
  });

  it('lets time pass without GPUs', () => {
    const job = state();
    advanceJob(job, 60, rules([], []));
    assert.deepEqual([job.current_s, job.progress, job.attained_gpu_s], [60, 0, 0]);
  });
});
