import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { parseStepBreakdown } from '../parse/step-breakdown.js';
import { verdictOf } from '../report/model.js';
import { rankFindings } from './finding.js';
import { stepBreakdownFindings } from './step-findings.js';

const log = (name: string) => JSON.parse(readFileSync(packagePath('fixtures', 'doctor', 'faults', name), 'utf8')) as Record<string, unknown>;

describe('thread oversubscription from the step log\'s host threads (written by the SDK)', () => {
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
    const b = parseStepBreakdown({ ...noHost, host: { cpu_count: 2, torch_threads: 1, local_processes: 2, dataloader_workers: 1 } });
    const over = stepBreakdownFindings(b, 's').find((f) => f.id === 'steps.cpu-oversubscribed');
    assert.equal(over?.impact_pct, 50);
    assert.ok(!stepBreakdownFindings(parseStepBreakdown(noHost), 's').some((f) => f.id === 'steps.cpu-oversubscribed'));
    assert.throws(() => parseStepBreakdown({ ...noHost, host: { cpu_count: 0, torch_threads: 1 } }), /host\.cpu_count/);
  });
});
