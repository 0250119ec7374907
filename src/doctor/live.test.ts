import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../util/package-root.js';
import { liveVerdict } from './live.js';

/** The SDK's reports carry the same breakdown as its step log: replay the recorded step logs as reports. */
function reportsOf(file: string) {
  const log = JSON.parse(readFileSync(packagePath('fixtures', 'doctor', 'faults', file), 'utf8')) as {
    steps: { step: number; data_wait_s: number; forward_backward_s: number; sync_s: number; optimizer_s: number }[];
  };
  return log.steps.map(({ step, ...b }) => ({ step, breakdown: { ...b, rank: 0 } }));
}

describe("live verdict from a job's own reports", () => {
  it('an input-bound job: waits on data, raise num_workers', () => {
    const v = liveVerdict(reportsOf('cpu-slow-getitem.steps.json'))!;
    assert.equal(v.verdict, 'input-pipeline');
    assert.match(
      v.line,
      /^this job waits on data \d+\.\d% of each step \(last \d+ reported steps\): raise DataLoader num_workers/,
    );
  });

  it('a compute-bound job says so; batch size 1 is per-step overhead', () => {
    assert.equal(liveVerdict(reportsOf('cpu-healthy.steps.json'))!.verdict, 'compute');
    assert.match(liveVerdict(reportsOf('cpu-healthy.steps.json'))!.line, /^compute-bound/);
    assert.equal(liveVerdict(reportsOf('cpu-batch-size-1.steps.json'))!.verdict, 'host-overhead');
  });

  it('time between steps (a host sync after optimizer.step()) is the verdict when it dominates', () => {
    const reports = reportsOf('cpu-healthy.steps.json').map((r) => ({
      ...r,
      breakdown: { ...r.breakdown, between_steps_s: 2 * r.breakdown.forward_backward_s },
    }));
    const v = liveVerdict(reports)!;
    assert.equal(v.verdict, 'sync-points');
    assert.equal(v.finding_id, 'steps.between-steps');
    assert.match(v.line, /^this job spends \d+\.\d% of each step between steps .*: no loss\.item\(\)/);
  });

  it('reads the host threads the reports carry: 16 threads on 2 cores is cpu-contention', () => {
    const host = { cpu_count: 2, torch_threads: 16, local_processes: 1, dataloader_workers: 0 };
    const v = liveVerdict(reportsOf('cpu-healthy.steps.json').map((r) => ({ ...r, host })))!;
    assert.equal(v.verdict, 'cpu-contention');
    assert.match(v.line, /^CPU threads oversubscribed: .*16 torch threads.*torch\.set_num_threads\(2\)/);
    assert.equal(
      liveVerdict(reportsOf('cpu-healthy.steps.json').map((r) => ({ ...r, host: { ...host, torch_threads: 2 } })))!
        .verdict,
      'compute',
    );
  });

  it('the advice on waiting for peers follows the backend the reports name: NCCL transport only for nccl', () => {
    const host = { cpu_count: 8, torch_threads: 2, local_processes: 2, dataloader_workers: 0 };
    // Sync is half of each step: the verdict is communication whatever the backend.
    const reports = (extra: Record<string, unknown>) =>
      [1, 2, 3].map((step) => ({
        step,
        host: { ...host, ...extra },
        breakdown: { data_wait_s: 0, forward_backward_s: 0.04, sync_s: 0.05, optimizer_s: 0.005 },
      }));
    const verdict = (extra: Record<string, unknown>) => {
      const v = liveVerdict(reports(extra))!;
      assert.equal(v.verdict, 'communication');
      assert.match(
        v.line,
        /^this job waits on peers \(gradient sync\) 52\.6% of each step \(last 3 reported steps\): /,
      );
      return v.line;
    };
    const gloo = verdict({ dist_backend: 'gloo' });
    assert.doesNotMatch(gloo, /NCCL transport|NCCL_DEBUG/);
    assert.match(gloo, /gloo syncs gradients over TCP.*no_sync\(\).*bucket_cap_mb.*fewer replicas per host/);
    const nccl = verdict({ dist_backend: 'nccl' });
    assert.match(nccl, /check the NCCL transport \(NCCL_DEBUG=INFO/);
    assert.doesNotMatch(nccl, /gloo/);
    for (const unknown of [
      {},
      { dist_backend: 'cpu:gloo,cuda:nccl' },
      { dist_backend: 42 },
      { dist_backend: 'x'.repeat(41) },
    ]) {
      const line = verdict(unknown);
      assert.doesNotMatch(line, /NCCL transport|gloo syncs/, JSON.stringify(unknown));
      assert.match(line, /check the collective backend's transport \(NCCL_DEBUG=INFO for NCCL\)/);
    }
  });

  it('uses only the newest window of reports, and nothing without a breakdown', () => {
    const slow = reportsOf('cpu-slow-getitem.steps.json');
    const healthy = reportsOf('cpu-healthy.steps.json');
    assert.equal(liveVerdict([...slow, ...healthy], healthy.length)!.verdict, 'compute');
    assert.equal(liveVerdict([{ step: 1 }, { step: 2, breakdown: { forward_s: 1 } }]), null);
    assert.equal(liveVerdict([]), null);
  });
});
