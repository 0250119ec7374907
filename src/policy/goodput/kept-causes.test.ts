/**
 * Issue 52: a waiting job's reason names the one cause that keeps the busy GPUs, not every
 * possibility at once ("not preemptible, no checkpoint yet, or within their minimum time slice").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoodputPolicy } from './index.js';
import { job, limits, nodes, perf, snapshot } from './test-jobs.js';

const model = { perf, grad: { sqr: 0.05, var: 5 }, limits };
/** A job with a billion samples left, on up to `replicas` GPUs, that may not be preempted. */
const pinnedJob = (replicas: number) =>
  job('pinned', {
    preemptible: false,
    max_replicas: replicas,
    max_profiled_replicas: replicas,
    model,
    remaining_samples: 1e9,
  });

test('GPUs held by a non-preemptible job: the reason says only that', () => {
  const pinned = pinnedJob(4);
  const decision = new GoodputPolicy().decide(
    snapshot([pinned, job('w', { model, max_profiled_replicas: 4 })], 1, { pinned: [0, 0, 0, 0] }),
  );
  assert.equal(
    decision.rejections?.w?.message,
    'all GPUs are in use (4 held by jobs that are not stopped now: not preemptible)',
  );
});

test('GPUs held by a job within its minimum time slice: the reason says only that', () => {
  // Unknown length, started 20 s ago: the hysteresis holds it (MIN_SLICE).
  const young = job('young', { max_replicas: 2, allocated_since_s: 3580, attained_service_gpu_s: 40 });
  const decision = new GoodputPolicy().decide({
    ...snapshot([young, job('w', { max_replicas: 1, submitted_at_s: 3590 })], 1, { young: [0, 0] }),
    nodes: nodes(1, 2),
  });
  assert.deepEqual(decision.allocations.young, [0, 0]);
  assert.equal(
    decision.rejections?.w?.message,
    'all GPUs are in use (2 held by jobs that are not stopped now: within their minimum time slice)',
  );
});

test('false friend: two causes at once are each counted', () => {
  const pinned = pinnedJob(1);
  const young = job('young', { max_replicas: 1, allocated_since_s: 3580, attained_service_gpu_s: 20 });
  const decision = new GoodputPolicy().decide({
    ...snapshot([pinned, young, job('w', { max_replicas: 1, submitted_at_s: 3590 })], 1, { pinned: [0], young: [0] }),
    nodes: nodes(1, 2),
  });
  assert.equal(
    decision.rejections?.w?.message,
    'all GPUs are in use (2 held by jobs that are not stopped now: 1 not preemptible, 1 within their minimum time slice)',
  );
});
