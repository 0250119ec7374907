import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { capLocalBatch } from '../goodput/batch-split.js';
import { getApplication } from './application.js';
import { polluxHooks } from './job-modes.js';
import { SimJob, type AdaptiveHooks } from './sim-job.js';
import { defaultTracesDir } from './workload.js';

const app = getApplication('imagenet', defaultTracesDir())!;

describe("a simulated job's batch choice", () => {
  it('is chosen again only when its fit, gradient statistics or placement changed, and is what a new choice gives', () => {
    let choices = 0;
    const hooks: AdaptiveHooks = {
      fit: polluxHooks.fit,
      chooseBatch: (model, n, r) => {
        choices++;
        return polluxHooks.chooseBatch(model, n, r);
      },
    };
    const job = new SimJob({ name: 'c', application: app, submit_s: 0, hooks });
    job.reallocate([2, 2], 0);
    let intervals = 0;
    const check = () => {
      // A choice made now on the job's model: the kept one must be it.
      const n = job.placement.length;
      const fresh = capLocalBatch(app.limits, polluxHooks.chooseBatch(job.model()!, n, 4), 4);
      assert.deepEqual([job.local_bsz, job.accum_steps], [fresh.local_bsz, fresh.accum_steps], `interval ${intervals}`);
    };
    // An imagenet epoch lasts several intervals: most intervals end within one.
    for (; intervals < 15; intervals++) {
      job.step(60);
      check();
    }
    const before = choices;
    job.reallocate([4], job.current_s); // another placement: chosen again
    assert.equal(choices, before + 1);
    job.step(60);
    check();
    assert.ok(choices < intervals, `fewer choices (${choices}) than intervals stepped (${intervals})`);
  });
});
