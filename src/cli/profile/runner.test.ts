import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitMemory, memoryPeak, replicaCounts, sweepConfigs } from './runner.js';

describe('profile sweep', () => {
  it('measures 1, 2, 4, ... replicas up to the devices', () => {
    assert.deepEqual(replicaCounts(1), [1]);
    assert.deepEqual(replicaCounts(2), [1, 2]);
    assert.deepEqual(replicaCounts(6), [1, 2, 4, 6]);
  });

  it('spaces local batches over the limits, ascending, with an accumulation step first where allowed', () => {
    const limits = {
      init_batch_size: 64,
      max_batch_size: 512,
      min_local_bsz: 8,
      max_local_bsz: 256,
      accumulation: true,
    };
    assert.deepEqual(sweepConfigs(limits, 1), [
      { local_bsz: 8, accum_steps: 1 },
      { local_bsz: 8, accum_steps: 0 },
      { local_bsz: 25, accum_steps: 0 },
      { local_bsz: 81, accum_steps: 0 },
      { local_bsz: 256, accum_steps: 0 },
    ]);
    // 4 replicas: total batch <= 512 caps the local batch at 128; no accumulation when the job forbids it.
    const four = sweepConfigs({ ...limits, accumulation: false }, 4);
    assert.deepEqual(
      four.map((c) => c.local_bsz),
      [8, 20, 51, 128],
    );
    assert.ok(four.every((c) => c.accum_steps === 0));
  });

  it("takes a GPU configuration's memory from its reports' allocator peaks, a CPU slot's from its resident memory", () => {
    const gpu = { devices: [{ index: 0, kind: 'gpu' as const, name: 'NVIDIA A100-SXM4-40GB', memory_mib: 40960 }] };
    const cpu = { devices: [{ index: 0, kind: 'cpu' as const, name: 'cpu' }] };
    const entries = [{ memory_peak_bytes: 3e9 }, { memory_peak_bytes: 5e9 }, { memory_peak_bytes: null }, {}];
    assert.equal(memoryPeak(gpu, entries, 7e8), 5e9);
    assert.equal(memoryPeak(gpu, [{}], 7e8), 0, 'no allocator peak reported: not measured (0), never the host RSS');
    assert.equal(memoryPeak(cpu, entries, 7e8), 7e8);
    const fit = fitMemory(
      [
        { local_bsz: 16, peak_bytes: 3e9 },
        { local_bsz: 32, peak_bytes: 5e9 },
      ],
      40960 * 2 ** 20,
      1024,
      'allocator',
    );
    assert.equal(fit.source, 'allocator');
    assert.equal(fit.max_local_bsz_fit, Math.floor((40960 * 2 ** 20 - 1e9) / 125e6));
  });

  it('fits peak memory as base + per-sample bytes and the largest batch that fits', () => {
    const m = fitMemory(
      [
        { local_bsz: 10, peak_bytes: 1100 },
        { local_bsz: 20, peak_bytes: 1200 },
        { local_bsz: 40, peak_bytes: 1400 },
      ],
      2000,
      256,
    );
    assert.ok(Math.abs(m.per_sample_bytes - 10) < 1e-9);
    assert.ok(Math.abs(m.base_bytes - 1000) < 1e-6);
    assert.equal(m.max_local_bsz_fit, 100);
    const flat = fitMemory(
      [
        { local_bsz: 10, peak_bytes: 1200 },
        { local_bsz: 20, peak_bytes: 1100 },
      ],
      2000,
      256,
    );
    assert.equal(flat.per_sample_bytes, 0, 'noise that shrinks with the batch is not a negative cost');
    assert.equal(flat.max_local_bsz_fit, 256);
  });
});
