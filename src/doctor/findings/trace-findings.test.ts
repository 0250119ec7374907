import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyzeTraceRank } from '../analyze/trace-rank.js';
import { prepareRank } from '../analyze/hta/prepare.js';
import { TopLevelSplitter } from '../parse/kineto/top-level-splitter.js';
import type { SyntheticTraceOptions } from '../../../test-support/doctor/synthetic-trace.js';
import { syntheticTraceChunks } from '../../../test-support/doctor/synthetic-trace.js';
import { addKinetoEvent, addKinetoMember, newKinetoRank } from '../parse/kineto/kineto-collector.js';
import type { TimeAttribution } from '../analyze/attribution.js';
import { attributionFindings } from './attribution-findings.js';
import { traceRankFindings } from './trace-findings.js';

function analyse(o: SyntheticTraceOptions) {
  const r = newKinetoRank('synthetic');
  const s = new TopLevelSplitter({
    onElement: (e) => addKinetoEvent(r, e),
    onMember: (k, v) => addKinetoMember(r, k, v),
  });
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

describe("a trace's collectives fix follows the backend", () => {
  // 30% waiting on peers, the rest compute: one collectives finding.
  const attribution = (basis: 'gpu-time' | 'step-time'): TimeAttribution => ({
    basis,
    total_us: 1000,
    steps: 4,
    causes: [
      { cause: 'collectives', time_us: 300, pct: 30, evidence: [] },
      { cause: 'compute', time_us: 700, pct: 70, evidence: [] },
    ],
  });
  const fixOf = (basis: 'gpu-time' | 'step-time', dist_backend?: string) =>
    attributionFindings(attribution(basis), 'trace', 'rank 0', 'cpu-compute', 't', dist_backend ? { dist_backend } : {})
      .find((f) => f.id === 'trace.unoverlapped-communication')!
      .fix.join('\n');

  it('gloo named in goodput_host: no NCCL settings; nccl or none: as the backend says', () => {
    assert.doesNotMatch(fixOf('step-time', 'gloo'), /NCCL_DEBUG/);
    assert.match(fixOf('step-time', 'gloo'), /gloo all-reduces the gradients over the host network/);
    assert.match(fixOf('gpu-time', 'nccl'), /Check the transport with NCCL_DEBUG=INFO/);
    assert.match(fixOf('step-time'), /Check the collective backend's transport \(NCCL_DEBUG=INFO for NCCL/);
  });

  it("goodput_host's dist_backend is read when well-formed and dropped otherwise", () => {
    const host = (value: unknown) => {
      const r = newKinetoRank('t');
      addKinetoMember(r, 'goodput_host', { cpu_count: 2, torch_threads: 1, dist_backend: value });
      return r.hostThreads;
    };
    assert.deepEqual(host('gloo'), { cpu_count: 2, torch_threads: 1, dist_backend: 'gloo' });
    assert.deepEqual(host(''), { cpu_count: 2, torch_threads: 1 });
    assert.deepEqual(host({ name: 'gloo' }), { cpu_count: 2, torch_threads: 1 });
  });
});
