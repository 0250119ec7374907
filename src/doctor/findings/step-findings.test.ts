import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { parseStepBreakdown } from '../parse/step-breakdown.js';
import { verdictOf } from '../report/model.js';
import { rankFindings } from './finding.js';
import { stepBreakdownFindings } from './step-findings.js';

const log = (name: string) => JSON.parse(readFileSync(packagePath('fixtures', 'doctor', 'faults', name), 'utf8')) as Record<string, unknown>;

describe('thread oversubscription from the step log\'s host threads (when the SDK writes them)', () => {
  it('the recorded oversubscribed run with its real thread counts: cpu-contention first', () => {
    // bench/doctor_faults.py ran it with torch.set_num_threads(16) on this 2-core machine
    const b = parseStepBreakdown({ ...log('cpu-oversubscribed.steps.json'), host: { cpu_count: 2, torch_threads: 16 } });
    const ranked = rankFindings(stepBreakdownFindings(b, 's'));
    assert.equal(ranked[0]!.id, 'steps.cpu-oversubscribed');
    assert.equal(ranked[0]!.impact_pct, 87.5);
    assert.match(ranked[0]!.fix[0]!, /torch\.set_num_threads\(2\)/);
    assert.equal(verdictOf(ranked), 'cpu-contention');
  });

  it('threads within the cores: no finding, still compute-bound; without host fields nothing is claimed', () => {
    const ok = rankFindings(stepBreakdownFindings(parseStepBreakdown({ ...log('cpu-healthy.steps.json'), host: { cpu_count: 2, torch_threads: 1, dataloader_workers: 1 } }), 's'));
    assert.ok(!ok.some((f) => f.id === 'steps.cpu-oversubscribed'));
    assert.equal(verdictOf(ok), 'compute');
    assert.ok(!stepBreakdownFindings(parseStepBreakdown(log('cpu-oversubscribed.steps.json')), 's').some((f) => f.id === 'steps.cpu-oversubscribed'));
    assert.throws(() => parseStepBreakdown({ ...log('cpu-healthy.steps.json'), host: { cpu_count: 0, torch_threads: 1 } }), /host\.cpu_count/);
  });
});
