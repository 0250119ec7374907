/**
 * Issue 52: one reason per waiting job, the one that applies, in the cluster's own word. Seen:
 * "4 held by jobs that are not stopped now: not preemptible, no checkpoint yet, or within their
 * minimum time slice", "GPUs" on a CPU-slot server, "or with a smaller -n" to a job of -n 1.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobRecordFixture } from '../../store/job-fixture.js';
import type { JobRecord } from '../../store/types.js';
import { gangWaitReason } from './gang.js';
import type { Rejection } from '../../policy/policy.js';
import { waitingReasons } from './waiting-reason.js';

/** waitingReasons of one rejection. */
const waitingReason = (r: Rejection, jobs: readonly JobRecord[], unit: string): Rejection =>
  waitingReasons({ j: r }, jobs, unit).get('j')!;

const busy = {
  code: 'WAITING_FOR_GPUS',
  message: 'all GPUs are in use (4 held by jobs that are not stopped now: not preemptible)',
};
const spec = jobRecordFixture().spec;
/** A running plain script on `n` devices with no checkpoint and no preemptible in its spec. */
const plain = (id: string, n: number): JobRecord => {
  const { preemptible: _p, ...rest } = spec;
  return jobRecordFixture({
    id,
    allocation: Array(n).fill(0),
    devices: [...Array(n).keys()],
    last_report_at_ms: null,
    spec: { ...rest, sdk: false },
  });
};
const pinned = (id: string, n: number): JobRecord =>
  jobRecordFixture({ id, allocation: Array(n).fill(0), spec: { ...spec, preemptible: false } });

describe('waitingReasons', () => {
  it('names the one cause: plain scripts with no checkpoint, in CPU slots', () => {
    const got = waitingReason(busy, [plain('a', 2), plain('b', 2)], 'CPU slot');
    assert.equal(
      got.message,
      'all CPU slots are in use (4 held by jobs that are not stopped now: no checkpoint yet (a stop would set them back to their beginning; submit with preemptible: true to allow))',
    );
    assert.equal(got.code, 'WAITING_FOR_GPUS', 'the code is stable');
  });
  it('names the one cause: a spec that says preemptible: false, in GPUs', () => {
    assert.equal(
      waitingReason(busy, [pinned('a', 4)], 'GPU').message,
      'all GPUs are in use (4 held by jobs that are not stopped now: not preemptible (submitted with preemptible: false))',
    );
  });
  it('counts both causes when both hold devices', () => {
    assert.match(
      waitingReason(busy, [pinned('a', 1), plain('b', 3)], 'CPU slot').message,
      /now: 1 CPU slot not preemptible \(submitted with preemptible: false\), 3 no checkpoint yet/,
    );
  });
  it('every rejection of a round, each with its own words, the jobs read once', () => {
    const other = { code: 'NO_FEASIBLE_SIZE', message: 'no GPU count fits' };
    const got = waitingReasons({ a: busy, b: other, c: busy }, [pinned('x', 4)], 'GPU');
    assert.deepEqual([...got.keys()], ['a', 'b', 'c']);
    assert.match(got.get('a')!.message, /now: not preemptible \(submitted with preemptible: false\)\)$/);
    assert.equal(got.get('c')!.message, got.get('a')!.message);
    assert.deepEqual(got.get('b'), other);
  });
  it('false friends: a reason without "not preemptible", a finished or waiting job, "GPU" inside another word', () => {
    const other = {
      code: 'WAITING_FOR_GPUS',
      message: 'all GPUs are in use (2 held by jobs that are not stopped now: within their minimum time slice)',
    };
    assert.equal(
      waitingReason(other, [plain('a', 2)], 'CPU slot').message,
      'all CPU slots are in use (2 held by jobs that are not stopped now: within their minimum time slice)',
    );
    const queued = jobRecordFixture({ state: 'queued', allocation: [], spec: { ...spec, preemptible: false } });
    assert.equal(waitingReason(busy, [queued], 'GPU').message, busy.message, 'a job that holds nothing is no cause');
    assert.equal(
      waitingReason({ code: 'X', message: 'GPUsPerNode of 1 GPU' }, [], 'CPU slot').message,
      'GPUsPerNode of 1 CPU slot',
    );
  });
});

describe('gangWaitReason', () => {
  it('-n 1: no gang, no "smaller -n"', () => {
    const one = gangWaitReason(1, 0, 'CPU slot(s)');
    assert.equal(one, 'waiting for 1 CPU slot; 0 free now');
    assert.doesNotMatch(one, /smaller -n|gang/);
  });
  it('false friend: -n 2 still says it starts together and may be smaller', () => {
    assert.match(
      gangWaitReason(2, 1, 'CPU slot(s)'),
      /waiting for 2 CPU slot\(s\) at once.*1 free now.*or with a smaller -n/,
    );
  });
});
