import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TypeMeasurement } from './type-measurement.js';
import {
  DEFAULT_CONTENTION,
  fitTypeFactors,
  HOST_LIMITED_SHARE,
  hostFloorCurve,
  hostLimitedFloorCurve,
  isHostBound,
  perStepShare,
  transferPredictor,
  type TransferJob,
} from './type-transfer.js';

/** Sia-like batches, a factor of about sqrt 2 apart. */
const BATCHES = [32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1024];

/** A one-GPU row at a batch (no sync). */
const oneGpuRow = (local_bsz: number, step_time_s: number): TypeMeasurement => ({
  placement: [1],
  num_nodes: 1,
  num_replicas: 1,
  local_bsz,
  step_time_s,
  sync_time_s: 0,
});

/**
 * A job on the reference: one GPU takes max(10 ms of per-step host work, 0.1 ms per sample), so it is host-limited up to
 * batch 100 and GPU-bound beyond. On one node of g GPUs its micro-step is the one-GPU one times 1 + 0.05 (g - 1) where
 * it is host-limited (the processes share the host), and times 0.9 where it is GPU-bound (something else, which must
 * not be read as host contention).
 */
function hostLimitedReference(): TypeMeasurement[] {
  const one = (b: number): number => Math.max(0.01, 1e-4 * b);
  const rows = BATCHES.map((b) => oneGpuRow(b, one(b)));
  for (const g of [2, 3, 4]) {
    for (const b of BATCHES) {
      const ratio = b < 70 ? 1 + 0.05 * (g - 1) : 0.9;
      rows.push({
        placement: [g],
        num_nodes: 1,
        num_replicas: g,
        local_bsz: b,
        step_time_s: one(b) * ratio + 0.002,
        sync_time_s: 0.002,
      });
    }
  }
  return rows;
}

/** One-GPU rows on a target whose GPU is 10x faster: 8 ms of host work per step up to batch 800 (flat), GPU-bound beyond. */
const flatTarget = (): TypeMeasurement[] =>
  [...BATCHES, 1448, 2048].map((b) => oneGpuRow(b, Math.max(0.008, 1e-5 * b)));

describe('host-limited floor', () => {
  it('measures the per-step share of a step as 1 minus its log-log slope', () => {
    assert.ok(Math.abs(perStepShare(() => 0.01, 64) - 1) < 1e-12);
    assert.ok(Math.abs(perStepShare((b) => 0.001 * b ** 0.3, 64) - 0.7) < 1e-12);
    assert.ok(Math.abs(perStepShare((b) => 0.001 * b, 64)) < 1e-12);
    assert.equal(
      perStepShare((b) => 0.001 * b * b, 64),
      0,
      'clamped: a step growing faster than the batch has no per-step share',
    );
    assert.ok(HOST_LIMITED_SHARE > 0.5 && HOST_LIMITED_SHARE < 1);
  });

  it("floors a host-limited job's step on the target by its reference contention at host-limited batches, extended to larger nodes", () => {
    const floor = hostLimitedFloorCurve(hostLimitedReference(), flatTarget());
    assert.ok(floor);
    // Contention 1.05, 1.10, 1.15 on 2, 3, 4 GPUs where the reference is host-limited (the 0.9 at GPU-bound batches not read).
    assert.ok(Math.abs((floor(1, 2, 64) as number) - 0.008 * 1.05) < 1e-12);
    assert.ok(Math.abs((floor(1, 4, 256) as number) - 0.008 * 1.15) < 1e-12);
    assert.ok(
      Math.abs((floor(1, 8, 256) as number) - 0.008 * 1.35) < 1e-12,
      '8 GPUs per node: +0.05 per GPU past the 4 measured',
    );
    assert.ok(
      Math.abs((floor(2, 16, 256) as number) - 0.008 * 1.35) < 1e-12,
      'per node: two nodes of 8 as one node of 8',
    );
    assert.equal(floor(2, 2, 256), undefined, 'one GPU per node: its one-GPU rows on the target hold its host work');
    assert.equal(floor(1, 8, 2048), undefined, 'GPU-bound on the target at that batch');
  });

  it('sets no floor for a job never host-limited on the reference, or host-bound there', () => {
    const gpuBound = hostLimitedReference().map((m) => ({
      ...m,
      step_time_s: 1e-4 * m.local_bsz * (m.num_replicas > 1 ? 1.02 : 1),
      sync_time_s: 0,
    }));
    assert.equal(hostLimitedFloorCurve(gpuBound, flatTarget()), undefined, 'never host-limited on the reference');
    const hostBound = hostLimitedReference().map((m) =>
      m.num_replicas > 1 ? { ...m, step_time_s: 1.3 * m.step_time_s } : m,
    );
    assert.equal(
      hostLimitedFloorCurve(hostBound, flatTarget()),
      undefined,
      'host-bound: the host floor applies instead',
    );
  });

  it("bounds the transferred step and never reads the job's own multi-GPU rows on the target", () => {
    // Three plain jobs teach the target type; the host-limited job is predicted from them.
    const plain = (k: number): TransferJob => {
      const one = (b: number): number => 0.02 * k + 1e-4 * b;
      const rows = (speed: number, net: number): TypeMeasurement[] =>
        [1, 2, 4, 8].flatMap((g) =>
          BATCHES.map((b) => ({
            placement: [g],
            num_nodes: 1,
            num_replicas: g,
            local_bsz: b,
            step_time_s: one(b) / speed + (g > 1 ? net * g : 0),
            sync_time_s: g > 1 ? net * g : 0,
          })),
        );
      return { reference: rows(1, 0.004).filter((m) => m.num_replicas <= 4), target: rows(3, 0.0005) };
    };
    const factors = fitTypeFactors([plain(1), plain(2), plain(3)]);
    const target = flatTarget();
    const job = { reference: hostLimitedReference(), target };
    const predict = transferPredictor(job, factors);
    assert.ok(predict);
    assert.ok((predict(1, 8, 256) as number) >= 0.008 * 1.35 - 1e-12);
    const perturbed = [
      ...target,
      ...[2, 4, 8].map((g) => ({
        placement: [g],
        num_nodes: 1,
        num_replicas: g,
        local_bsz: 256,
        step_time_s: 5,
        sync_time_s: 1,
      })),
    ];
    const again = transferPredictor({ reference: job.reference, target: perturbed }, factors);
    for (const g of [2, 4, 8]) assert.equal(again?.(1, g, 256), predict(1, g, 256));
  });

  it('takes its thresholds as knobs (bench:plan chooses them on held-in types): a part set to Infinity is off', () => {
    const hostBound = hostLimitedReference().map((m) =>
      m.num_replicas > 1 ? { ...m, step_time_s: 1.3 * m.step_time_s } : m,
    );
    assert.equal(isHostBound(hostBound), true);
    assert.ok(hostFloorCurve(hostBound));
    const noHostBound = { ...DEFAULT_CONTENTION, host_bound_contention: Infinity };
    assert.equal(isHostBound(hostBound, noHostBound), false);
    assert.equal(hostFloorCurve(hostBound, noHostBound), undefined);
    assert.ok(hostLimitedFloorCurve(hostLimitedReference(), flatTarget()));
    assert.equal(
      hostLimitedFloorCurve(hostLimitedReference(), flatTarget(), {
        ...DEFAULT_CONTENTION,
        host_limited_share: Infinity,
      }),
      undefined,
    );
  });
});
