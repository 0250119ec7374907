import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { gpuSamplesFromExposition, looksLikeExposition, parseExposition } from './prometheus.js';

const fixture = (...p: string[]) => readFileSync(packagePath('fixtures', 'doctor', ...p), 'utf8');

describe('Prometheus exposition', () => {
  it('parses labels with escapes, special values and timestamps; skips comments and junk', () => {
    const s = parseExposition(
      '# HELP x y\n# TYPE x gauge\nx{a="q\\"uote",b="back\\\\slash",c="new\\nline"} 1.5e+3 1700000000000\ny NaN\nz{} +Inf\nnot a metric line\nw{broken="x} 1\n',
    );
    assert.deepEqual(
      s.map((p) => [p.name, p.value]),
      [
        ['x', 1500],
        ['y', NaN],
        ['z', Infinity],
      ],
    );
    assert.deepEqual(s[0]!.labels, { a: 'q"uote', b: 'back\\slash', c: 'new\nline' });
    assert.equal(s[0]!.timestamp_ms, 1700000000000);
  });

  it('nvidia_gpu_exporter: the real H100 file gives the values the exporter parsed from nvidia-smi', () => {
    const [g] = gpuSamplesFromExposition(
      parseExposition(
        fixture('nvidia-smi', 'captures', 'linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01__load.metrics'),
      ),
    );
    assert.deepEqual(
      [
        g!.name,
        g!.utilization_gpu_pct,
        g!.memory_used_bytes,
        g!.memory_total_bytes,
        g!.power_draw_w,
        g!.power_limit_w,
        g!.clocks_sm_mhz,
        g!.persistence_mode,
      ],
      ['NVIDIA H100 80GB HBM3', 100, 20780679168, 85520809984, 631.95, 700, 1980, true],
    );
  });

  it('dcgm-exporter: two GPUs, three scrapes in one file, MiB and totals converted', () => {
    const samples = gpuSamplesFromExposition(
      parseExposition(fixture('prometheus', 'dcgm-exporter-2xA100-3-scrapes.prom')),
      'dcgm-exporter',
    );
    assert.equal(samples.length, 6);
    const gpu1 = samples.filter((s) => s.index === 1);
    assert.deepEqual(
      gpu1.map((s) => s.utilization_gpu_pct),
      [31, 12, 27],
    );
    assert.equal(gpu1[0]!.memory_used_bytes, 10414 * 2 ** 20);
    assert.equal(gpu1[0]!.memory_total_bytes, (10414 + 30121 + 425) * 2 ** 20);
    assert.equal(gpu1[0]!.name, 'NVIDIA A100-SXM4-40GB');
    assert.equal(gpu1[0]!.uuid, 'GPU-a3c9e2d4-1b7f-4e08-b5a1-6d2f8c9e0b13');
  });

  it('falls back to graphics-engine activity when GPU_UTIL is not exported', () => {
    const [g] = gpuSamplesFromExposition(parseExposition('DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-x"} 0.42\n'));
    assert.equal(g!.utilization_gpu_pct, 42);
  });

  it('recognises exposition only when every leading line is exposition', () => {
    assert.equal(looksLikeExposition(fixture('prometheus', 'dcgm-exporter-2xA100-3-scrapes.prom')), true);
    assert.equal(looksLikeExposition('# gpu pwr\n    0   69\n'), false);
    assert.equal(looksLikeExposition('index, name\n0, A100\n'), false);
    assert.equal(looksLikeExposition('only_one_line 1\n'), false);
  });
});
