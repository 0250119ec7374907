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
  it('a slow data loader shows as a gap before each step and as GPU waiting for the host', () => {
    const a = analyse({ rank: 0, worldSize: 1, steps: 4, kernelsPerStep: 200, seed: 3, dataLoaderUs: 20_000 });
    assert.equal(a.step_timing!.steps, 3);
    assert.equal(a.step_timing!.mean_data_loader_us, 20_000);
    const ids = traceRankFindings(a).map((f) => f.id);
    assert.ok(ids.includes('trace.step-start-gap'), ids.join(', '));
    assert.ok(ids.includes('trace.gpu-waits-for-host'), ids.join(', '));
    assert.ok(ids.includes('trace.pageable-memcpy'), ids.join(', '));
  });

  it('a fast loader raises no input-pipeline finding', () => {
    const a = analyse({ rank: 0, worldSize: 1, steps: 4, kernelsPerStep: 200, seed: 3, dataLoaderUs: 10 });
    const ids = traceRankFindings(a).map((f) => f.id);
    assert.ok(!ids.includes('trace.step-start-gap'), ids.join(', '));
    assert.equal(a.device, 'NVIDIA A100-SXM4-80GB');
    assert.ok(a.gemm.fp32_simt_us > 0 && a.gemm.tf32_tensor_core_us > 0);
  });
});
