import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobRecordFixture } from '../../store/job-fixture.js';
import type { JobRecord, JobState } from '../../store/types.js';
import { fairQueue } from './fair-queue.js';

const job = (id: string, user: string, state: JobState, submitted_at_ms: number): JobRecord =>
  jobRecordFixture({ id, user, state, submitted_at_ms });

describe('fairQueue', () => {
  it('leaves the jobs of one owner as they are (the same array)', () => {
    const jobs = [job('r', 'a', 'running', 0), job('q1', 'a', 'queued', 1), job('q2', 'a', 'queued', 2)];
    assert.equal(fairQueue(jobs), jobs);
  });

  it('interleaves waiting jobs by owner, fewest held first, with the submission times of their places', () => {
    const jobs = [
      job('r1', 'flood', 'running', 0),
      job('f1', 'flood', 'queued', 10),
      job('f2', 'flood', 'queued', 11),
      job('f3', 'flood', 'preempted', 12),
      job('b1', 'bob', 'queued', 50),
      job('b2', 'bob', 'queued', 60),
      job('c1', 'carol', 'queued', 70),
    ];
    const fair = fairQueue(jobs);
    assert.deepEqual(
      fair.map((j) => j.id),
      ['r1', 'b1', 'c1', 'f1', 'b2', 'f2', 'f3'],
    );
    assert.deepEqual(
      fair.map((j) => j.submitted_at_ms),
      [0, 10, 11, 12, 50, 60, 70],
      'the real times, reassigned by place',
    );
    assert.deepEqual(
      fair.filter((j) => j.user === 'flood').map((j) => j.id),
      ['r1', 'f1', 'f2', 'f3'],
      "an owner's own order is kept",
    );
  });
});
