import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';
import { parseQueryGpuCsv } from '../parse/nvidia-smi/query-csv.js';
import { parseTopoMatrix } from '../parse/nvidia-smi/topo.js';
import { verdictOf } from '../report/model.js';
import { summarizeGpus } from '../summarize-gpus.js';
import type { Finding } from './finding.js';
import { rankFindings } from './finding.js';
import { nvidiaSmiFindings, topologyFindings } from './smi-findings.js';

function csvSeries(): string {
  const rows = [
    'index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W], power.limit [W], clocks_throttle_reasons.sw_power_cap',
  ];
  for (let i = 0; i < 20; i++) {
    rows.push(`0, NVIDIA A100-SXM4-80GB, ${(i * 37) % 100} %, 70000 MiB, 81920 MiB, 250.0 W, 400.00 W, Not Active`);
    rows.push(`1, NVIDIA A100-SXM4-80GB, 99 %, 78000 MiB, 81920 MiB, 399.0 W, 400.00 W, Active`);
  }
  return rows.join('\n');
}

describe('nvidia-smi findings', () => {
  const findings = nvidiaSmiFindings({ samples: parseQueryGpuCsv(csvSeries()), processes: [] }, 'gpu.csv');

  it('flags the under-used GPU, the power-capped one and the one near out-of-memory', () => {
    assert.deepEqual(findings.map((f) => f.id).sort(), [
      'smi.clock-throttling',
      'smi.low-gpu-utilization',
      'smi.memory-nearly-full',
    ]);
    const low = findings.find((f) => f.id === 'smi.low-gpu-utilization')!;
    assert.match(low.title, /^GPU 0 .*46\.5% on average/);
    assert.match(low.evidence[0]!, /55\.0% of samples below 50%/);
    const throttle = findings.find((f) => f.id === 'smi.clock-throttling')!;
    assert.match(throttle.title, /GPU 1 .*sw_power_cap/);
    assert.ok(throttle.fix.some((x) => x.includes('nvidia-smi -pl')));
  });

  it('ranks by impact and names the limiting resource', () => {
    const ranked = rankFindings(findings);
    assert.equal(ranked[0]!.id, 'smi.low-gpu-utilization');
    assert.equal(verdictOf(ranked), 'input-pipeline');
  });
});

describe('GPU summaries', () => {
  it('one per GPU with the latest values and a time axis from the CSV timestamps', () => {
    const csv =
      'timestamp, index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n' +
      '2024/01/31 12:00:00.000, 0, 10 %, 100 MiB, 1000 MiB\n2024/01/31 12:00:01.500, 0, 90 %, 900 MiB, 1000 MiB\n2024/01/31 12:00:03.000, 0, 50 %, 500 MiB, 1000 MiB';
    const [g] = summarizeGpus(parseQueryGpuCsv(csv), 'gpu.csv');
    assert.deepEqual([g!.utilization_gpu_pct, g!.memory_used_bytes, g!.samples], [50, 500 * 2 ** 20, 3]);
    assert.deepEqual(g!.utilization_series_pct, [10, 90, 50]);
    assert.deepEqual(g!.utilization_series_t_s, [0, 1.5, 3]);
  });
});

describe('topology findings (DGX-1)', () => {
  const t = parseTopoMatrix(
    readFileSync(packagePath('fixtures', 'doctor', 'topology', 'dgx1-8xV100-topo-m.txt'), 'utf8'),
  )!;
  const f = topologyFindings(t, 'topo.txt');

  it('names the GPU pairs that cross the CPU sockets and the NVLink pairs', () => {
    const cross = f.find((x) => x.id === 'topo.gpu-pairs-cross-host-bridge')!;
    assert.match(cross.title, /^12 of 28 GPU pairs/);
    assert.ok(cross.evidence.some((e) => e.startsWith('SYS') && e.includes('GPU0-GPU5')));
    assert.ok(cross.evidence[0]!.includes('GPU0-GPU3 (NV2)'));
  });

  it("gives CPU binding commands from each GPU's affinity and the NICs nearest each GPU", () => {
    const aff = f.find((x) => x.id === 'topo.cpu-affinity')!;
    assert.ok(aff.fix[0]!.startsWith('numactl --physcpubind=0-19,40-59'));
    const nic = f.find((x) => x.id === 'topo.gpu-nic-affinity')!;
    assert.ok(nic.evidence.includes('GPU0: mlx5_0'));
    assert.ok(nic.fix[0]!.includes('NCCL_IB_HCA=mlx5_0,mlx5_2,mlx5_1,mlx5_3'));
  });
});

describe('ranking', () => {
  const f = (id: string, impact: number, severity: Finding['severity']): Finding => ({
    id,
    impact_pct: impact,
    severity,
    bottleneck: 'system',
    title: id,
    evidence: ['e'],
    fix: ['f'],
    source: 's',
  });

  it('orders issues before notes, each by impact, then severity, then id; verdict is healthy when nothing matters', () => {
    assert.deepEqual(
      rankFindings([f('b', 1, 'info'), f('a', 1, 'warning'), f('c', 5, 'info'), f('d', 2, 'critical')]).map(
        (x) => x.id,
      ),
      ['d', 'a', 'c', 'b'],
    );
    assert.equal(verdictOf([f('x', 1, 'warning')]), 'healthy');
  });

  it('the verdict is the largest issue; a compute-bound note names compute only when nothing needs fixing', () => {
    const compute: Finding = { ...f('trace.compute-bound', 67, 'info'), bottleneck: 'gpu-compute' };
    const sync: Finding = { ...f('trace.sync-points', 28, 'critical'), bottleneck: 'sync-points' };
    assert.equal(verdictOf([compute, sync]), 'sync-points');
    assert.equal(verdictOf([compute, { ...sync, severity: 'info' }]), 'gpu-compute');
    assert.deepEqual(
      rankFindings([compute, sync]).map((x) => x.id),
      ['trace.sync-points', 'trace.compute-bound'],
    );
  });
});
