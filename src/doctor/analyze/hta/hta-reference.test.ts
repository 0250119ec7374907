import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { packagePath } from '../../../util/package-root.js';
import { loadKinetoTrace } from '../../parse/kineto/load-trace.js';
import type { KinetoRank } from '../../parse/kineto/kineto-collector.js';
import { commCompOverlapPct, kernelTypeTable, kernelTypeTimes, temporalBreakdown } from './breakdown.js';
import { idleBreakdown, idleRatio, launchStats, queueLength } from './launch.js';
import type { PreparedRank } from './prepare.js';
import { prepareRank } from './prepare.js';

// Expected values are HTA's own output (commit f4d0062) in fixtures/doctor/pytorch-traces/hta-reference-output.txt.
const trace = (...p: string[]) => packagePath('fixtures', 'doctor', 'pytorch-traces', ...p);

async function load(...files: string[]): Promise<PreparedRank[]> {
  const ranks: KinetoRank[] = [];
  for (const f of files) ranks.push((await loadKinetoTrace(f)).data);
  const names = new Set(ranks.flatMap((r) => [...r.stepNames]));
  return ranks.sort((a, b) => a.rank - b.rank).map((r) => prepareRank(r, names.size));
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

function assertTemporal(p: PreparedRank, expected: [number, number, number, number, number, number, number]): void {
  const t = temporalBreakdown(p)!;
  assert.deepEqual(
    [t.idle_us, t.compute_us, t.non_compute_us, t.kernel_time_us, t.idle_pct, t.compute_pct, t.non_compute_pct],
    expected,
  );
}

function assertIdle(p: PreparedRank, expected: Record<number, Record<string, [number, number]>>): void {
  const got = idleBreakdown(p);
  assert.deepEqual(
    got.map((s) => s.stream).sort((a, b) => a - b),
    Object.keys(expected)
      .map(Number)
      .sort((a, b) => a - b),
  );
  for (const s of got) {
    const want = expected[s.stream]!;
    assert.deepEqual([...s.categories], Object.keys(want), `categories of stream ${s.stream}`);
    for (const [cat, [time, ratio]] of Object.entries(want)) {
      const c = cat as 'host_wait' | 'kernel_wait' | 'other';
      assert.equal(
        c === 'host_wait' ? s.host_wait_us : c === 'kernel_wait' ? s.kernel_wait_us : s.other_us,
        time,
        `stream ${s.stream} ${cat}`,
      );
      if (Number.isNaN(ratio)) assert.ok(Number.isNaN(idleRatio(s, c)));
      else assert.equal(idleRatio(s, c), ratio, `stream ${s.stream} ${cat} ratio`);
    }
  }
}

function assertLaunch(p: PreparedRank, rows: number, cpu: number, gpu: number, delay: number, short: number): void {
  const l = launchStats(p);
  assert.equal(l.rows, rows);
  if (rows === 0) return assert.ok(Number.isNaN(l.cpu_dur_mean_us));
  assert.deepEqual(
    [r3(l.cpu_dur_mean_us), r3(l.gpu_dur_mean_us), r3(l.launch_delay_mean_us), l.short_kernels],
    [cpu, gpu, delay, short],
  );
}

function assertQueue(
  p: PreparedRank,
  expected: Record<number, [number, number, number, number, number, number, number, number]>,
): void {
  const got = queueLength(p);
  assert.deepEqual(
    got.map((q) => q.stream),
    Object.keys(expected)
      .map(Number)
      .sort((a, b) => a - b),
  );
  for (const q of got) {
    assert.deepEqual(
      [q.count, r3(q.mean), r3(q.std), q.min, q.p25, q.p50, q.p75, q.max],
      expected[q.stream],
      `queue stream ${q.stream}`,
    );
  }
}

describe('HTA reference numbers', () => {
  it('recsys 128-rank job, sampled ranks 0 and 1', async () => {
    const [r0, r1] = await load(
      trace('recsys-128rank-sampled', 'rank-0.json.gz'),
      trace('recsys-128rank-sampled', 'rank-1.json.gz'),
    );
    assert.deepEqual(r0!.iterations, [551]);
    assertTemporal(r0!, [321378, 106252, 172428, 600058, 53.56, 17.71, 28.74]);
    assertTemporal(r1!, [328671, 135548, 136455, 600674, 54.72, 22.57, 22.72]);
    assert.equal(commCompOverlapPct(r0!), 11.81);
    assert.equal(commCompOverlapPct(r1!), 20.05);
    const times = new Map<string, number>();
    kernelTypeTimes(r0!, times);
    kernelTypeTimes(r1!, times);
    assert.deepEqual(
      kernelTypeTable(times).map((k) => [k.kernel_type, k.time_us, k.pct]),
      [
        ['COMMUNICATION', 305584, 55.5],
        ['COMPUTATION', 185023, 33.6],
        ['COMPUTATION overlapping COMMUNICATION', 56747, 10.3],
        ['MEMORY', 2288, 0.4],
        ['COMMUNICATION overlapping MEMORY', 1011, 0.2],
        ['COMPUTATION overlapping MEMORY', 18, 0],
        ['COMPUTATION overlapping COMMUNICATION overlapping MEMORY', 12, 0],
      ],
    );
    assertIdle(r0!, {
      23: { host_wait: [596037, 1], kernel_wait: [70, 0], other: [34, 0] },
      84: { host_wait: [148934, 1], kernel_wait: [6, 0], other: [0, 0] },
      25: { kernel_wait: [9, 0], other: [47865, 1] },
      7: { host_wait: [213825, 0.45], kernel_wait: [1985, 0], other: [261740, 0.55] },
      203: { other: [0, NaN] },
    });
    assertLaunch(r0!, 602, 8.487, 502.061, 16412.163, 140);
    assertQueue(r0!, {
      7: [1052, 23.62, 19.977, 0, 3, 22, 38, 76],
      23: [126, 0.595, 0.683, 0, 0, 1, 1, 4],
      25: [16, 4, 2.422, 0, 2, 4, 6, 8],
      84: [8, 0.5, 0.535, 0, 0, 0.5, 1, 1],
      203: [2, 0.5, 0.707, 0, 0.25, 0.5, 0.75, 1],
    });
  });

  it('V100 DDP world 1, ns-resolution timestamps (GPU-bound)', async () => {
    const [r] = await load(trace('v100-ddp1-gpu-bound.rank0.json.gz'));
    assert.deepEqual(r!.iterations, [101, 102, 103, 104]);
    assertTemporal(r!, [10113, 372150, 2371, 384634, 2.63, 96.75, 0.62]);
    assert.equal(commCompOverlapPct(r!), null);
    assert.deepEqual(
      kernelTypeTable(kernelTypeTimes(r!)).map((k) => [k.kernel_type, k.time_us, k.pct]),
      [
        ['COMPUTATION', 372150, 99.4],
        ['MEMORY', 2371, 0.6],
      ],
    );
    assertIdle(r!, { 7: { host_wait: [1709, 0.17], kernel_wait: [8404, 0.83], other: [0, 0] } });
    assertLaunch(r!, 4876, 39.395, 76.809, 66048.568, 2752);
    assertQueue(r!, { 7: [9752, 812.413, 306.062, 0, 764.75, 973, 1020, 1022] });
  });

  it('A100 2-rank NCCL trace (host-bound)', async () => {
    const [r] = await load(trace('a100-2rank-nccl', 'nccl_data.json.gz'));
    assert.deepEqual(r!.iterations, [4, 5]);
    assertTemporal(r!, [338781, 75169, 21636, 435586, 77.78, 17.26, 4.97]);
    assert.equal(commCompOverlapPct(r!), 14.31);
    assert.deepEqual(
      kernelTypeTable(kernelTypeTimes(r!)).map((k) => [k.kernel_type, k.time_us, k.pct]),
      [
        ['COMPUTATION', 71696, 74.1],
        ['COMMUNICATION', 20621, 21.3],
        ['COMPUTATION overlapping COMMUNICATION', 3473, 3.6],
        ['MEMORY', 831, 0.9],
        ['COMMUNICATION overlapping MEMORY', 184, 0.2],
      ],
    );
    assertIdle(r!, {
      7: { host_wait: [357247, 0.99], kernel_wait: [2155, 0.01], other: [0, 0] },
      40: { host_wait: [381499, 1], other: [0, 0] },
    });
    assertLaunch(r!, 2516, 8.461, 39.929, 28.07, 1347);
    assertQueue(r!, { 7: [5004, 0.814, 1.057, 0, 0, 1, 1, 10], 40: [28, 0.5, 0.509, 0, 0, 0.5, 1, 1] });
  });

  it('AMD MI250 (ROCm) trace', async () => {
    const [r] = await load(trace('mi250-minitoy.json.gz'));
    assert.deepEqual(r!.iterations, [1]);
    assertTemporal(r!, [8780, 96, 35, 8911, 98.53, 1.08, 0.39]);
    assert.equal(commCompOverlapPct(r!), null);
    assert.deepEqual(
      kernelTypeTable(kernelTypeTimes(r!)).map((k) => [k.kernel_type, k.time_us, k.pct]),
      [
        ['COMPUTATION', 96, 73.3],
        ['MEMORY', 35, 26.7],
      ],
    );
    assertIdle(r!, { 0: { host_wait: [8780, 1], other: [0, 0] } });
    assertLaunch(r!, 0, 0, 0, 0, 0);
    assertQueue(r!, { 0: [32, 0.5, 0.508, 0, 0, 0.5, 1, 1] });
  });

  it('CPU-only trace has no GPU breakdown', async () => {
    const [r] = await load(trace('cpu-only.json.gz'));
    assert.equal(r!.source.rank, 34);
    assert.equal(temporalBreakdown(r!), undefined);
    assert.deepEqual(queueLength(r!), []);
  });
});
