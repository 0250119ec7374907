import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { loadKinetoTrace } from '../parse/kineto/load-trace.js';
import type { Cause } from './attribution.js';
import { prepareRank } from './hta/prepare.js';
import { analyzeTraceRank } from './trace-rank.js';
import { intersect, length, sharesOf, subtract, union } from './intervals.js';

const fx = (...p: string[]) => packagePath('fixtures', 'doctor', ...p);

async function analyse(file: string) {
  const { data } = await loadKinetoTrace(file);
  return analyzeTraceRank(prepareRank(data, data.stepNames.size));
}

const largest = (a: NonNullable<Awaited<ReturnType<typeof analyse>>['attribution']>): Cause =>
  [...a.causes].sort((x, y) => y.pct - x.pct)[0]!.cause;

describe('interval helpers', () => {
  it('union, subtract, intersect and shares that add up to exactly 100', () => {
    const a = union([
      [0, 10],
      [5, 12],
      [20, 30],
    ]);
    assert.deepEqual(a, [
      [0, 12],
      [20, 30],
    ]);
    assert.deepEqual(
      subtract(a, [
        [2, 4],
        [11, 25],
      ]),
      [
        [0, 2],
        [4, 11],
        [25, 30],
      ],
    );
    assert.deepEqual(intersect(a, [[10, 21]]), [
      [10, 12],
      [20, 21],
    ]);
    assert.equal(length(a), 22);
    assert.deepEqual(sharesOf([1, 1, 1], 3), [33.34, 33.33, 33.33]);
  });
});

describe('every idle percent is attributed (real traces)', () => {
  const gpuTraces = [
    fx('pytorch-traces', 'v100-ddp1-gpu-bound.rank0.json.gz'),
    fx('pytorch-traces', 'a100-2rank-nccl', 'nccl_data.json.gz'),
    fx('pytorch-traces', 'recsys-128rank-sampled', 'rank-0.json.gz'),
    fx('pytorch-traces', 'mi250-minitoy.json.gz'),
    fx('faults', 'gpu-healthy.trace.json.gz'),
    fx('faults', 'gpu-item-sync.trace.json.gz'),
    fx('faults', 'gpu-slow-getitem.trace.json.gz'),
  ];
  for (const file of gpuTraces) {
    it(`GPU time of ${file.split('/').pop()}: shares add up to 100%, compute and idle agree with HTA`, async () => {
      const r = await analyse(file);
      const a = r.attribution!;
      assert.equal(a.basis, 'gpu-time');
      assert.equal(a.causes.reduce((s, c) => s + c.pct, 0).toFixed(2), '100.00');
      assert.equal(a.total_us, r.temporal!.kernel_time_us);
      // HTA's non-compute can be a few µs negative (sub-µs activities after its rounding): compute absorbs it
      const artefact = Math.min(0, r.temporal!.non_compute_us);
      assert.equal(a.causes.find((c) => c.cause === 'compute')!.time_us, r.temporal!.compute_us + artefact);
      const rest = a.causes.filter((c) => c.cause !== 'compute').reduce((s, c) => s + c.time_us, 0);
      assert.equal(rest, r.temporal!.idle_us + Math.max(0, r.temporal!.non_compute_us));
    });
  }

  it('names the cause injected into the recorded GPU runs (H100)', async () => {
    assert.equal(
      largest((await analyse(fx('faults', 'gpu-slow-getitem.trace.json.gz'))).attribution!),
      'input-pipeline',
    );
    assert.equal(largest((await analyse(fx('faults', 'gpu-healthy.trace.json.gz'))).attribution!), 'compute');
    // .item() every step: the idle it causes is sync time; the same script without it has none
    const sync = (await analyse(fx('faults', 'gpu-item-sync.trace.json.gz'))).attribution!;
    const control = (await analyse(fx('faults', 'gpu-item-sync-control.trace.json.gz'))).attribution!;
    const pct = (a: typeof sync, c: Cause) => a.causes.find((x) => x.cause === c)!.pct;
    assert.ok(pct(sync, 'sync-points') >= 20, `sync ${pct(sync, 'sync-points')}%`);
    assert.equal(pct(control, 'sync-points'), 0);
    assert.equal(
      [...sync.causes].filter((c) => c.cause !== 'compute').sort((x, y) => y.pct - x.pct)[0]!.cause,
      'sync-points',
    );
  });

  const cpu: [string, Cause][] = [
    ['cpu-slow-getitem', 'input-pipeline'],
    ['cpu-heavy-transform', 'input-pipeline'],
    ['cpu-batch-size-1', 'host-overhead'],
    ['cpu-healthy', 'compute'],
  ];
  for (const [name, cause] of cpu) {
    it(`step time of the torch 1.13 CPU run ${name}: largest cause ${cause}, shares add up to 100%`, async () => {
      const r = await analyse(fx('faults', `${name}.trace.json.gz`));
      assert.equal(r.temporal, undefined);
      const a = r.attribution!;
      assert.equal(a.basis, 'step-time');
      assert.equal(a.causes.reduce((s, c) => s + c.pct, 0).toFixed(2), '100.00');
      assert.equal(largest(a), cause);
    });
  }

  it('nested operators are folded into their top-level span: memory follows top-level operators', async () => {
    const { data } = await loadKinetoTrace(fx('faults', 'cpu-healthy.trace.json.gz'));
    assert.ok(
      data.cpu.ts.length * 3 < data.eventCount,
      `${data.cpu.ts.length} spans kept of ${data.eventCount} events`,
    );
  });

  it('a CPU-only Kineto trace whose step waits on gloo all-reduce threads: waiting on peers', async () => {
    const a = (await analyse(fx('pytorch-traces', 'cpu-only.json.gz'))).attribution!;
    assert.equal(largest(a), 'collectives');
  });
});
