import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runDoctor } from '../../src/doctor/run-doctor.js';
import { packagePath } from '../../src/util/package-root.js';
import { CPU_CASES, GPU_REPLAYS, judge, type FaultCase } from './fault-cases.js';

// The recorded runs in fixtures/doctor/faults judged as bench:doctor-faults judges fresh ones.
const fx = (...p: string[]) => packagePath('fixtures', 'doctor', ...p);

/** A case is judged through the artifacts that carry its evidence (notJudgedVia, docs/doctor.md). */
const judged = (c: FaultCase, via: 'trace' | 'steps') => c.notJudgedVia?.via !== via;

describe('fault-injection cases on the recorded runs', () => {
  for (const c of CPU_CASES) {
    for (const via of ['trace', 'steps'] as const) {
      const file = fx('faults', `cpu-${c.name}.${via === 'trace' ? 'trace.json.gz' : 'steps.json'}`);
      it(`${c.name} via ${via}: ${judged(c, via) ? 'names the injected cause' : 'not judged (no evidence in this artifact), and not claimed'}`, async () => {
        const j = judge(await runDoctor([file]), c);
        assert.equal(j.match, judged(c, via), JSON.stringify(j));
      });
    }
  }
  for (const g of GPU_REPLAYS) {
    for (const f of g.files) {
      const via = f.endsWith('.steps.json') ? 'steps' : 'trace';
      it(`${g.name} via ${via}`, async () => {
        const j = judge(await runDoctor([fx(...f.split('/'))]), g);
        assert.equal(j.match, judged(g, via), JSON.stringify(j));
      });
    }
  }

  it('the healthy runs, CPU and GPU, get a compute verdict and no warning', async () => {
    for (const f of [
      'faults/cpu-healthy.trace.json.gz',
      'faults/cpu-healthy.steps.json',
      'faults/gpu-healthy.trace.json.gz',
      'faults/gpu-healthy.steps.json',
    ]) {
      const r = await runDoctor([fx(...f.split('/'))]);
      assert.match(r.verdict, /compute/, f);
      assert.equal(r.findings.filter((x) => x.severity !== 'info').length, 0, f);
    }
  });
});
