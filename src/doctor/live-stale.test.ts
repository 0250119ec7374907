/**
 * Issue 52: the live verdict went stale and guessed: "waits on peers 82.4%" shown after the job
 * ended on 1 replica; "waits on data 21.5%, raise num_workers" for an in-memory TensorDataset.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { liveDoctorLine, liveVerdict, type LiveReport } from './live.js';

const syncHeavy = { data_wait_s: 0, forward_backward_s: 0.02, sync_s: 0.1, optimizer_s: 0.002 };
const computeBound = { data_wait_s: 0, forward_backward_s: 0.1, sync_s: 0, optimizer_s: 0.002 };
const dataBound = { data_wait_s: 0.03, forward_backward_s: 0.1, sync_s: 0, optimizer_s: 0.002 };
const at = (
  attempt: number,
  num_replicas: number,
  breakdown: Record<string, number>,
  n: number,
  host?: Record<string, unknown>,
): LiveReport[] =>
  Array.from({ length: n }, (_, i) => ({
    step: i,
    attempt,
    num_replicas,
    breakdown,
    ...(host ? { host: host as never } : {}),
  }));

describe('live verdict: stale evidence', () => {
  const history = [...at(0, 3, syncHeavy, 150), ...at(1, 1, computeBound, 20)];
  it('reads only the newest configuration: 3 replicas waiting on peers says nothing about 1', () => {
    assert.equal(liveVerdict(at(0, 3, syncHeavy, 150))!.verdict, 'communication', 'the evidence as it was');
    const v = liveVerdict(history)!;
    assert.equal(v.verdict, 'compute');
    assert.equal(v.steps, 20);
  });
  it('an ended job is not described in the present; a resized one has no verdict until it reports', () => {
    const ended = liveDoctorLine(history, { state: 'succeeded', replicas: 0 });
    assert.match(ended, /^not running now \(succeeded\); when it last ran on 1 replica: compute-bound/);
    assert.doesNotMatch(ended, /peers/);
    assert.equal(
      liveDoctorLine(at(0, 3, syncHeavy, 10), { state: 'running', replicas: 1 }),
      'no verdict yet on 1 replica: its newest step breakdowns are from 3',
    );
  });
  it('false friend: a running job at the size it reported keeps its verdict', () => {
    assert.match(
      liveDoctorLine(at(0, 3, syncHeavy, 10), { state: 'running', replicas: 3 }),
      /^this job waits on peers \(gradient sync\)/,
    );
    assert.equal(
      liveDoctorLine([], { state: 'running', replicas: 1 }),
      'no step breakdown reported yet (the SDK reports one per step)',
    );
  });
});

describe('live verdict: data wait without loader I/O', () => {
  const host = { cpu_count: 8, torch_threads: 1, local_processes: 1, dataloader_workers: 0 };
  it('an in-memory TensorDataset: says what the wait is, no num_workers advice', () => {
    const v = liveVerdict(at(0, 1, dataBound, 10, { ...host, in_memory_dataset: true }))!;
    assert.equal(v.finding_id, 'steps.data-wait');
    assert.match(
      v.line,
      /building batches from its in-memory dataset \(indexing and collating tensors in the training process, no I\/O\)/,
    );
    assert.doesNotMatch(v.line, /raise DataLoader num_workers/);
  });
  it('false friend: a dataset read from disk still gets the num_workers advice', () => {
    assert.match(
      liveVerdict(at(0, 1, dataBound, 10, host))!.line,
      /^this job waits on data .*raise DataLoader num_workers/,
    );
  });
});
