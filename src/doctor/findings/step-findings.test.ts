import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { parseStepBreakdown } from '../parse/step-breakdown.js';
import { verdictOf } from '../report/model.js';
import { rankFindings } from './finding.js';
import { stepBreakdownFindings } from './step-findings.js';

const log = (name: string) =>
  JSON.parse(readFileSync(packagePath('fixtures', 'doctor', 'faults', name), 'utf8')) as Record<string, unknown>;

describe("thread oversubscription from the step log's host threads (written by the SDK)", () => {
  it('the recorded oversubscribed run with the host fields the SDK wrote: cpu-contention first', () => {
    // bench/doctor_faults.py ran it with torch.set_num_threads(16) on this 2-core machine
    const b = parseStepBreakdown(log('cpu-oversubscribed.steps.json'));
    assert.deepEqual(b.host, { cpu_count: 2, torch_threads: 16, local_processes: 1, dataloader_workers: 0 });
    const ranked = rankFindings(stepBreakdownFindings(b, 's'));
    assert.equal(ranked[0]!.id, 'steps.cpu-oversubscribed');
    assert.equal(ranked[0]!.impact_pct, 87.5);
    assert.match(ranked[0]!.fix[0]!, /torch\.set_num_threads\(2\)/);
    assert.equal(verdictOf(ranked), 'cpu-contention');
  });

  it('the recorded healthy and 1-worker runs fit their cores: no finding, verdicts unchanged', () => {
    const healthy = rankFindings(stepBreakdownFindings(parseStepBreakdown(log('cpu-healthy.steps.json')), 's'));
    assert.ok(!healthy.some((f) => f.id === 'steps.cpu-oversubscribed'));
    assert.equal(verdictOf(healthy), 'compute');
    const slow = parseStepBreakdown(log('cpu-slow-getitem.steps.json'));
    assert.equal(slow.host?.dataloader_workers, 1); // 1 thread + 1 worker = 2 cores: not oversubscribed
    assert.ok(!stepBreakdownFindings(slow, 's').some((f) => f.id === 'steps.cpu-oversubscribed'));
  });

  it('workers count per process: 2 processes x (1 thread + 1 worker) on 2 cores is oversubscribed', () => {
    const { host: _ignored, ...noHost } = log('cpu-healthy.steps.json');
    const b = parseStepBreakdown({
      ...noHost,
      host: { cpu_count: 2, torch_threads: 1, local_processes: 2, dataloader_workers: 1 },
    });
    const over = stepBreakdownFindings(b, 's').find((f) => f.id === 'steps.cpu-oversubscribed');
    assert.equal(over?.impact_pct, 50);
    assert.ok(!stepBreakdownFindings(parseStepBreakdown(noHost), 's').some((f) => f.id === 'steps.cpu-oversubscribed'));
    assert.throws(() => parseStepBreakdown({ ...noHost, host: { cpu_count: 0, torch_threads: 1 } }), /host\.cpu_count/);
  });
});

describe("time between steps (the SDK's between_steps_s)", () => {
  it('a large share is a sync-points finding first, named honestly (sync or host work)', () => {
    const { steps, ...rest } = log('cpu-healthy.steps.json') as { steps: { forward_backward_s: number }[] };
    const b = parseStepBreakdown({
      ...rest,
      steps: steps.map((s) => ({ ...s, between_steps_s: s.forward_backward_s })),
    });
    const ranked = rankFindings(stepBreakdownFindings(b, 's'));
    assert.equal(ranked[0]!.id, 'steps.between-steps');
    assert.equal(ranked[0]!.bottleneck, 'sync-points');
    assert.match(ranked[0]!.title, /^Synchronisation or host work between steps: 4\d\.\d% of each step/);
    assert.equal(verdictOf(ranked), 'sync-points');
  });

  it('below 5% it is no finding; a log without the field says a sync after the step is unseen', () => {
    const { steps, ...rest } = log('cpu-healthy.steps.json') as { steps: { forward_backward_s: number }[] };
    const small = rankFindings(
      stepBreakdownFindings(
        parseStepBreakdown({
          ...rest,
          steps: steps.map((s) => ({ ...s, between_steps_s: 0.01 * s.forward_backward_s })),
        }),
        's',
      ),
    );
    assert.equal(small[0]!.id, 'steps.compute-bound');
    assert.match(small[0]!.evidence[0]!, /between steps \d\.\d%/);
    const old = rankFindings(stepBreakdownFindings(parseStepBreakdown(log('gpu-item-sync.steps.json')), 's'));
    assert.ok(old[0]!.evidence.some((e) => /has no between_steps_s/.test(e)));
    assert.throws(
      () => parseStepBreakdown({ ...rest, steps: steps.map((s) => ({ ...s, between_steps_s: -1 })) }),
      /steps\.0\.between_steps_s/,
    );
  });
});

describe("waiting on peers: the fix follows the step log's dist_backend", () => {
  const syncHeavy = (host?: Record<string, unknown>) => {
    const {
      steps,
      host: _ignored,
      ...rest
    } = log('cpu-healthy.steps.json') as { steps: { forward_backward_s: number }[]; host?: unknown };
    // Sync as long as forward+backward: the run waits on peers half of each step.
    return parseStepBreakdown({
      ...rest,
      ...(host ? { host } : {}),
      steps: steps.map((s) => ({ ...s, sync_s: s.forward_backward_s })),
    });
  };
  const sync = (b: ReturnType<typeof parseStepBreakdown>) =>
    stepBreakdownFindings(b, 's').find((f) => f.id === 'steps.sync-heavy')!;
  const threads = { cpu_count: 8, torch_threads: 2, local_processes: 2, dataloader_workers: 0 };

  it('gloo: host-network remedies, no NCCL settings; nccl: the NCCL transport check', () => {
    const gloo = syncHeavy({ ...threads, dist_backend: 'gloo' });
    assert.equal(gloo.host?.dist_backend, 'gloo');
    const glooFix = sync(gloo).fix.join('\n');
    assert.doesNotMatch(glooFix, /NCCL_DEBUG|NCCL_IB|NVLink, intra-node|Check the transport/);
    assert.match(glooFix, /over the host network \(TCP/);
    assert.match(glooFix, /no_sync\(\)/);
    assert.match(glooFix, /bucket_cap_mb=100/);
    assert.match(glooFix, /Fewer replicas per host.*backend="nccl"/);
    assert.ok(
      sync(gloo).evidence.includes(
        "torch.distributed backend: gloo (the log's host.dist_backend); the fixes are for it",
      ),
    );
    assert.match(
      sync(syncHeavy({ ...threads, dist_backend: 'nccl' })).fix.join('\n'),
      /Check the transport with NCCL_DEBUG=INFO.*NCCL_IB_HCA.*P2P\/NVLink/,
    );
  });

  it('no backend (old logs, no host, or a malformed name dropped): advice that assumes none', () => {
    for (const b of [
      syncHeavy(),
      syncHeavy(threads),
      syncHeavy({ ...threads, dist_backend: 'rm -rf /' }),
      syncHeavy({ ...threads, dist_backend: ['gloo'] }),
    ]) {
      assert.equal(b.host?.dist_backend, undefined);
      if (b.host) assert.ok(!('dist_backend' in b.host), 'a dropped name leaves no key behind');
      const fix = sync(b).fix.join('\n');
      assert.match(fix, /Check the collective backend's transport \(NCCL_DEBUG=INFO for NCCL/);
      assert.doesNotMatch(fix, /gloo all-reduces|Check the transport with NCCL_DEBUG/);
      assert.match(sync(b).evidence.at(-1)!, /does not name the torch\.distributed backend/);
    }
  });
});
