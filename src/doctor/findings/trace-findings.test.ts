import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyzeTraceRank } from '../analyze/trace-rank.js';
import { prepareRank } from '../analyze/hta/prepare.js';
import { TopLevelSplitter } from '../parse/kineto/top-level-splitter.js';
import type { SyntheticTraceOptions } from '../../../test-support/doctor/synthetic-trace.js';
import { syntheticTraceChunks } from '../../../test-support/doctor/synthetic-trace.js';
import { addKinetoEvent, addKinetoMember, newKinetoRank } from '../parse/kineto/kineto-collector.js';
import { traceRankFindings } from './trace-findings.js';

function analyse(o: SyntheticTraceOptions) {
  const r = newKinetoRank('synthetic');
  const s = new TopLevelSplitter({ onElement: (e) => addKinetoEvent(r, e), onMember: (k, v) => addKinetoMember(r, k, v) });
  for (const chunk of syntheticTraceChunks(o, 1 << 14)) s.feed(chunk);
  assert.equal(s.finish(), true);
  return analyzeTraceRank(prepareRank(r, r.stepNames.size));
}

describe('trace findings on generated traces', () => {
  it('a slow data loader: the GPU idle time is attributed to the input pipeline, which comes first', () => {
    const a = analyse({ rank: 0, worldSize: 1, steps: 4, kernelsPerStep: 200, seed: 3, dataLoaderUs: 20_000 });
    assert.equal(a.step_timing!.steps, 3);
    assert.equal(a.step_timing!.mean_data_loader_us, 20_000);
    const total = a.attribution!.causes.reduce((s, c) => s + c.pct, 0);
    assert.equal(total.toFixed(2), '100.00');
    const f = traceRankFindings(a).sort((x, y) => y.impact_pct - x.impact_pct);
    assert.equal(f[0]!.id, 'trace.input-pipeline', f.map((x) => x.id).join(', '));
    assert.equal(f[0]!.impact_pct, a.attribution!.causes.find((c) => c.cause === 'input-pipeline')!.pct);
    assert.ok(f[0]!.fix[0]!.includes('num_workers'));
  });

  it('a fast loader raises no input-pipeline finding', () => {
    const a = analyse({ rank: 0, worldSize: 1, steps: 4, kernelsPerStep: 200, seed: 3, dataLoaderUs: 10 });
    const ids = traceRankFindings(a).map((f) => f.id);
    assert.ok(!ids.includes('trace.input-pipeline'), ids.join(', '));
    assert.equal(a.device, 'NVIDIA A100-SXM4-80GB');
    assert.ok(a.gemm.fp32_simt_us > 0 && a.gemm.tf32_tensor_core_us > 0);
  });
});
