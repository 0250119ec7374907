import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../../util/package-root.js';
import { parseCapture, splitCapture } from './capture.js';
import type { GpuSample } from './gpu-sample.js';
import { parseMonitor } from './monitor.js';
import { parseQueryGpuCsv } from './query-csv.js';
import { parseNvidiaSmiQueryText } from './query-text.js';
import { parseTopoMatrix } from './topo.js';
import { parseNvidiaSmiXml } from './xml.js';

const fixture = (...p: string[]) => readFileSync(packagePath('fixtures', 'doctor', ...p), 'utf8');

/** Reads a Prometheus text exposition (the exporter's parse of the same capture) into name → value. */
function metrics(file: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of fixture('nvidia-smi', 'captures', file).split('\n')) {
    const m = /^(nvidia_smi_[a-z_]+)(?:\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

const CAPTURES = [
  'linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01',
  'linux-x86_64__nvidia-l40s__595.80',
  'linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05',
];

describe('nvidia-smi captures agree with the exporter .metrics files', () => {
  for (const name of CAPTURES) {
    for (const state of ['idle', 'load'] as const) {
      it(`${name} (${state})`, () => {
        const data = parseCapture(fixture('nvidia-smi', 'captures', `${name}.txt`));
        const csv = data.samples.filter((s) => s.source === 'query-gpu csv' && s.state === state);
        assert.equal(csv.length, 1);
        const s = csv[0]!;
        const m = metrics(`${name}__${state}.metrics`);
        assert.equal(s.utilization_gpu_pct! / 100, m.get('nvidia_smi_utilization_gpu_ratio'));
        assert.equal(s.utilization_memory_pct! / 100, m.get('nvidia_smi_utilization_memory_ratio'));
        assert.equal(s.memory_used_bytes, m.get('nvidia_smi_memory_used_bytes'));
        assert.equal(s.memory_total_bytes, m.get('nvidia_smi_memory_total_bytes'));
        assert.equal(s.power_draw_w, m.get('nvidia_smi_power_draw_watts'));
        assert.equal(s.power_limit_w, m.get('nvidia_smi_enforced_power_limit_watts'));
        assert.equal(s.temperature_gpu_c, m.get('nvidia_smi_temperature_gpu'));
        assert.equal(s.clocks_sm_mhz! * 1e6, m.get('nvidia_smi_clocks_current_sm_clock_hz'));
        assert.equal(s.clocks_max_sm_mhz! * 1e6, m.get('nvidia_smi_clocks_max_sm_clock_hz'));
        assert.equal(s.persistence_mode ? 1 : 0, m.get('nvidia_smi_persistence_mode'));
        // -q text of the same state reads the same memory totals
        const q = data.samples.find((x) => x.source === '-q' && x.state === state)!;
        assert.equal(q.memory_total_bytes, m.get('nvidia_smi_memory_total_bytes'));
      });
    }
  }

  it('splits a capture into titled sections with commands', () => {
    const sections = splitCapture(fixture('nvidia-smi', 'captures', `${CAPTURES[0]}.txt`));
    const dmon = sections.find((s) => s.state === 'load' && /dmon/.test(s.command))!;
    assert.equal(dmon.command, 'nvidia-smi dmon -c 5');
    const mon = parseMonitor(dmon.body)!;
    assert.equal(mon.kind, 'dmon');
    assert.deepEqual(
      mon.samples.map((x) => x.power_draw_w),
      [631, 634, 633, 634, 636],
    );
    assert.deepEqual(
      mon.samples.map((x) => x.utilization_gpu_pct),
      [100, 100, 100, 100, 100],
    );
  });

  it('reads pmon processes and the single-GPU topology with CPU/NUMA affinity', () => {
    const data = parseCapture(fixture('nvidia-smi', 'captures', `${CAPTURES[0]}.txt`));
    assert.deepEqual([...new Set(data.processes.filter((p) => p.type === 'C').map((p) => p.command))].sort(), [
      'gpu_burn',
      'memhog',
    ]);
    assert.deepEqual(data.topology!.gpus, [{ name: 'GPU0', cpu_affinity: '0-19', numa_affinity: '0' }]);
    assert.equal(data.driver_version, '590.48.01');
  });
});

describe('nvidia-smi -q -x (XML, DTD v10-v12)', () => {
  const one = (file: string): GpuSample => {
    const x = parseNvidiaSmiXml(fixture('nvidia-smi', 'xml', file));
    assert.equal(x.gpus.length, 1);
    return x.gpus[0]!;
  };

  it('A100 with MIG (v12): power under gpu_power_readings, MIG instances, no utilization', () => {
    const g = one('a100-sxm4-v12.xml');
    assert.equal(g.name, 'NVIDIA A100-SXM4-80GB');
    assert.equal(g.memory_total_bytes, 81920 * 2 ** 20);
    assert.equal(g.memory_used_bytes, 50 * 2 ** 20);
    assert.equal(g.power_draw_w, 67.03);
    assert.equal(g.power_limit_w, 500);
    assert.equal(g.mig_enabled, true);
    assert.equal(g.mig_devices, 4);
    assert.equal(g.utilization_gpu_pct, undefined);
    assert.equal(g.persistence_mode, false);
  });

  it('Tesla T4 (v11): power_readings, clocks, retired pages', () => {
    const g = one('tesla-t4.xml');
    assert.deepEqual(
      [
        g.name,
        g.utilization_gpu_pct,
        g.power_draw_w,
        g.power_limit_w,
        g.clocks_sm_mhz,
        g.clocks_max_sm_mhz,
        g.temperature_gpu_c,
      ],
      ['Tesla T4', 0, 26.78, 70, 585, 1590, 40],
    );
    assert.equal(g.memory_total_bytes, 15360 * 2 ** 20);
    assert.equal(g.retired_pages, 0);
    assert.deepEqual([g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max], [3, 3, 8, 16]);
  });

  it('GTX 1070 Ti (v10, minimal): power N/A stays absent', () => {
    const g = one('gtx-1070-ti.xml');
    assert.equal(g.power_draw_w, undefined);
    assert.equal(g.memory_used_bytes, 42 * 2 ** 20);
    assert.equal(g.utilization_gpu_pct, 0);
  });

  it('RTX 3090 (v12): clocks_throttle_reasons with gpu_idle only means no throttling', () => {
    const g = one('rtx-3090-v12.xml');
    assert.deepEqual(g.throttle_reasons, []);
    assert.equal(g.power_limit_w, 200);
  });

  it('every XML fixture parses with a name and total memory', () => {
    for (const f of ['a10g.xml', 'quadro-p400.xml', 'rtx-3060-v12.xml', 'rtx-3080-v12.xml']) {
      const g = one(f);
      assert.ok(g.name && g.memory_total_bytes! > 0, f);
    }
  });
});

describe('query-gpu CSV variants', () => {
  it('header with units', () => {
    const [s] = parseQueryGpuCsv(
      'name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W]\nNVIDIA A100-SXM4-40GB, 87 %, 30000 MiB, 40960 MiB, 301.5 W\n',
    );
    assert.deepEqual(
      [s!.name, s!.utilization_gpu_pct, s!.memory_used_bytes, s!.memory_total_bytes, s!.power_draw_w],
      ['NVIDIA A100-SXM4-40GB', 87, 30000 * 2 ** 20, 40960 * 2 ** 20, 301.5],
    );
  });
  it('noheader,nounits with the digest field order', () => {
    const rows = parseQueryGpuCsv('95, 40, 40960, 39000\n12, 3, 40960, 1000\n');
    assert.deepEqual(
      rows.map((r) => [r.utilization_gpu_pct, r.memory_total_bytes, r.memory_used_bytes]),
      [
        [95, 40960 * 2 ** 20, 39000 * 2 ** 20],
        [12, 40960 * 2 ** 20, 1000 * 2 ** 20],
      ],
    );
  });
  it('noheader with units is inferred from the units', () => {
    const [s] = parseQueryGpuCsv('0, Tesla V100-SXM2-32GB, 100 %, 32510 MiB, 32768 MiB, 290.1 W');
    assert.deepEqual(
      [s!.index, s!.name, s!.utilization_gpu_pct, s!.power_draw_w],
      [0, 'Tesla V100-SXM2-32GB', 100, 290.1],
    );
  });
});

describe('nvidia-smi topo -m', () => {
  it('DGX-1: NVLink hybrid cube-mesh, cross-socket pairs, NICs and affinity', () => {
    const t = parseTopoMatrix(fixture('topology', 'dgx1-8xV100-topo-m.txt'))!;
    assert.equal(t.gpus.length, 8);
    assert.deepEqual(t.nics, ['mlx5_0', 'mlx5_2', 'mlx5_1', 'mlx5_3']);
    const link = (a: string, b: string) => t.links.find((l) => (l.a === a && l.b === b) || (l.a === b && l.b === a));
    assert.deepEqual(link('GPU0', 'GPU3'), { a: 'GPU0', b: 'GPU3', kind: 'NVLINK', nvlinks: 2 });
    assert.equal(link('GPU0', 'GPU5')!.kind, 'SYS');
    assert.equal(link('GPU0', 'mlx5_0')!.kind, 'PIX');
    assert.equal(
      t.links.filter((l) => l.a.startsWith('GPU') && l.b.startsWith('GPU') && l.kind === 'NVLINK').length,
      16,
    );
    assert.equal(t.gpus[4]!.cpu_affinity, '20-39,60-79');
  });
  it('spaces instead of tabs, ANSI escapes, NUMA column', () => {
    const text =
      '\x1b[4m        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\x1b[0m\nGPU0     X      NV12    PXB     0-31            0               N/A\nGPU1    NV12     X      SYS     32-63           1               N/A\nNIC0    PXB     SYS      X\n\nLegend:\n  X    = Self\n';
    const t = parseTopoMatrix(text)!;
    assert.deepEqual(
      t.gpus.map((g) => [g.name, g.cpu_affinity, g.numa_affinity]),
      [
        ['GPU0', '0-31', '0'],
        ['GPU1', '32-63', '1'],
      ],
    );
    assert.equal(t.links.find((l) => l.a === 'GPU0' && l.b === 'GPU1')!.nvlinks, 12);
    assert.equal(t.links.find((l) => l.a === 'GPU1' && l.b === 'NIC0')!.kind, 'SYS');
  });
});

describe('nvidia-smi -q text', () => {
  it('reads the load state of the H100 capture', () => {
    const section = splitCapture(fixture('nvidia-smi', 'captures', `${CAPTURES[0]}.txt`)).find(
      (s) => s.state === 'load' && s.command === 'nvidia-smi -q',
    )!;
    const q = parseNvidiaSmiQueryText(section.body);
    const g = q.gpus[0]!;
    assert.deepEqual(
      [
        g.name,
        g.utilization_gpu_pct,
        g.memory_used_bytes,
        g.power_limit_w,
        g.clocks_sm_mhz,
        g.persistence_mode,
        g.mig_enabled,
      ],
      ['NVIDIA H100 80GB HBM3', 100, 19818 * 2 ** 20, 700, 1980, true, false],
    );
  });
});
